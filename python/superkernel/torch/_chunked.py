"""Prompts of any length with a bounded number of compiles: chunked prefill.

Shapes are static, so a module compiled for a 7-token prompt takes only 7
tokens. Fast-inference model files (a forward(tokens, input_pos) over a KV
cache indexed by the positions) run a prompt of length T, then tokens one by
one. `compile_chunked` serves every length 1..max_len with at most
floor(log2(max_len)) + 1 compiled shapes: a call of length T runs as chunks
of power-of-two lengths, largest first (13 = 8 + 4 + 1), each chunk a call
of the compiled module for that length on the next slice of every sequence
argument, and the outputs are concatenated along the output's sequence
dimension. A decode step is the chunk of length 1.

When this is exact: running positions [s, e) after [0, s) must give rows
[s, e) of running [0, e) at once. That is what a causal model with a KV
cache computes (each chunk writes its keys and values at its positions and
attends, under the causal mask, to every position up to its own), and it is
how the fast-inference repositories' models are written. A model without a
KV cache, or whose output is not per position, must not be chunked: compile
one module per length there.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import torch

from .._capi import BadInputError, InvalidArgumentError


class ChunkedModule:
    """A model compiled per power-of-two chunk length; call it with any length up to max_len."""

    def __init__(self, model, example_args, seq_dims: Sequence[Optional[int]], max_len: int, out_dim: int,
                 compile_kwargs):
        from . import compile as _compile  # the package's compile (its checks, its session)
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 1:
            raise InvalidArgumentError(f"compile_chunked: max_len must be a positive int, not {max_len!r}")
        if isinstance(example_args, torch.Tensor):
            example_args = (example_args,)
        if len(seq_dims) != len(example_args):
            raise InvalidArgumentError(f"compile_chunked: seq_dims has {len(seq_dims)} entries for "
                                       f"{len(example_args)} arguments (one dimension or None per argument)")
        if all(d is None for d in seq_dims):
            raise InvalidArgumentError("compile_chunked: seq_dims names no sequence dimension")
        self._compile = _compile
        self._model = model
        self._example = tuple(example_args)
        self._dims = list(seq_dims)
        self._max = max_len
        self._out_dim = out_dim
        self._kw = compile_kwargs
        self._by_len: Dict[int, object] = {}
        self.chunk_lengths = [1 << i for i in range(max_len.bit_length()) if (1 << i) <= max_len][::-1]

    @property
    def compiled_lengths(self):
        """The chunk lengths compiled so far (at most floor(log2(max_len)) + 1 of them)."""
        return sorted(self._by_len)

    def _length(self, args) -> int:
        lengths = {a.shape[d] for a, d in zip(args, self._dims) if d is not None}
        if len(lengths) != 1:
            raise BadInputError(f"compile_chunked: the sequence dimensions of the arguments disagree "
                                f"({sorted(lengths)}); every argument's seq_dims entry must have the same length")
        return lengths.pop()

    def _slice(self, args, start, length):
        return tuple(a if d is None else a.narrow(d, start, length) for a, d in zip(args, self._dims))

    def module_for(self, length: int):
        """The compiled module for one chunk length (compiled on first use)."""
        cm = self._by_len.get(length)
        if cm is None:
            ex = tuple(torch.zeros(a.shape[:d] + (length,) + a.shape[d + 1:], dtype=a.dtype) if d is not None else a
                       for a, d in zip(self._example, self._dims))
            cm = self._by_len[length] = self._compile(self._model, ex, **self._kw)
        return cm

    def __call__(self, *args):
        if len(args) != len(self._dims):
            raise InvalidArgumentError(f"chunked module takes {len(self._dims)} argument(s), got {len(args)}")
        total = self._length(args)
        if not 1 <= total <= self._max:
            raise BadInputError(f"compile_chunked: length {total} is outside 1..{self._max} (max_len)")
        outs, start = [], 0
        for length in self.chunk_lengths:
            while total - start >= length:
                outs.append(self.module_for(length)(*self._slice(args, start, length)))
                start += length
        if len(outs) == 1:
            return outs[0]
        if not all(isinstance(o, torch.Tensor) for o in outs):
            raise BadInputError("compile_chunked: the model's output must be one tensor with a sequence dimension "
                                "(out_dim) to be concatenated over chunks")
        return torch.cat(outs, dim=self._out_dim)
