"""Models Debian ships, used unchanged: PyTorch's own nn.TransformerEncoderLayer,
nn.TransformerDecoderLayer and nn.MultiheadAttention in eval (their fast
paths included), torchvision's VisionTransformer and ResNet-18
(python3-torchvision, installed by scripts/setup.sh). Each equals eager; each
has at least one SuperKernel and every eager op has its reason (only
convolution and max pooling may stay eager)."""

import unittest

import torch

from _util import CompileTestCase

F32 = dict(rtol=1e-4, atol=1e-5)
MAY_STAY_EAGER = ("aten.convolution.default", "aten.max_pool2d_with_indices.default")


class DebianModelsTest(CompileTestCase):
    cache_tag = "models"

    def check(self, model, args, tol=F32):
        torch.manual_seed(0)
        cm = self.compile(model, args)
        with torch.no_grad():
            want = model(*args)
        got = cm(*args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                if w is not None:
                    torch.testing.assert_close(g, w, **tol)
        else:
            torch.testing.assert_close(got, want, **tol)
        s = cm.summary()
        self.assertGreaterEqual(s["superkernels"], 1, cm.report)
        for split in s["splits"]:
            self.assertTrue(any(op in split["at"] for op in MAY_STAY_EAGER), split)
            self.assertIn("runs eagerly", split["reason"])
        return s

    def test_transformer_encoder_layer_fast_path(self):
        torch.manual_seed(1)
        x = torch.randn(2, 6, 32)
        for kw in (dict(), dict(norm_first=True, activation="gelu")):
            layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True, **kw).eval()
            s = self.check(layer, (x,))
            self.assertEqual((s["launches"], s["eager_ops"]), (1, 0), s)

    def test_transformer_decoder_layer(self):
        torch.manual_seed(2)
        layer = torch.nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
        s = self.check(layer, (torch.randn(2, 6, 32), torch.randn(2, 5, 32)))
        self.assertEqual(s["eager_ops"], 0, s)

    def test_multihead_attention_with_weights(self):
        torch.manual_seed(3)
        mha = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()
        x = torch.randn(2, 6, 32)
        s = self.check(mha, (x, x, x))
        self.assertEqual(s["eager_ops"], 0, s)

    def test_vision_transformer(self):
        import torchvision
        torch.manual_seed(4)
        vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                                   hidden_dim=64, mlp_dim=128, num_classes=10).eval()
        s = self.check(vit, (torch.randn(1, 3, 32, 32),))
        self.assertEqual(s["eager_ops"], 1, s["splits"])  # the patch convolution

    def test_resnet18_batch_norm_and_in_place_relu_fuse_between_convolutions(self):
        import torchvision
        torch.manual_seed(5)
        s = self.check(torchvision.models.resnet18(num_classes=10).eval(), (torch.randn(1, 3, 32, 32),),
                       dict(rtol=1e-3, atol=1e-4))
        self.assertEqual(s["eager_ops"], 21, s["splits"])  # 20 convolutions and one max pool
        self.assertEqual(s["superkernels"], 20)


if __name__ == "__main__":
    unittest.main()
