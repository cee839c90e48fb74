// z = x + y in f32, written the way Ascend C users write vector kernels (the public add sample's
// structure): a TPipe, double-buffered TQue<VECIN> / TQue<VECOUT>, GlobalTensor::SetGlobalBuffer,
// DataCopy between GM and the unified buffer, Add, EnQue / DeQue / FreeTensor. The op list
// (ascend_add.json) launches it as the seed's add_100 .. add_400, 40 blocks each.
//
// Static shapes, as the ascend back end compiles every sub-kernel: the op's scalar n arrives as
// -DSK_N=<n>; GetBlockNum() is the op's block count (inside a SuperKernel too). Block b adds elements
// [b * n / blocks, (b + 1) * n / blocks) in TILE_NUM * BUFFER_NUM tiles, so n must split into whole
// 32-byte tiles: n % (blocks * TILE_NUM * BUFFER_NUM * 8) == 0 (81920 on 40 blocks: 2048 per block,
// tiles of 128 floats). Its sum does not depend on how many blocks split it, so the op list declares it
// "block_dim_invariant": inside a SuperKernel on fewer vector cores than 40 (a sub-kernel's blocks each
// need a core of their own) it runs as one block per core. 81920 splits for 2, 4, 8, 16 and 40 of them
// (1, 2, 4, 8 and 20 AI Cores); on a device of another size the coarsened launch fails with the message
// below, naming the rule, where the unfused one runs (a kernel author would handle a remainder tile).
//
// With -DADD_EARLY_START (the kernel "add_es" of the op list, declared "early_start": true) it also
// marks its own early-start points: WaitPreTaskEnd before the first MTE2 copy-in (Init, which moves no
// data, overlaps the previous sub-kernel) and SetNextTaskStart after the last MTE3 copy-out (its flag is
// issued on PIPE_MTE3, so it follows that copy on a device). Outside a SuperKernel both do nothing.
#include "kernel_operator.h"
using namespace AscendC;

#ifndef SK_N
#error "add_custom: scalar n is compile-time: -DSK_N=<value>"
#endif

constexpr int32_t TILE_NUM = 8;    // tiles per block and buffer
constexpr int32_t BUFFER_NUM = 2;  // double buffering: copy-in of tile i+1 overlaps compute of tile i

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
    {
        const int64_t blocks = GetBlockNum();
        blockLength = static_cast<int32_t>((SK_N) / blocks);
        tileLength = blockLength / TILE_NUM / BUFFER_NUM;
        if ((SK_N) % (blocks * TILE_NUM * BUFFER_NUM * 8) != 0) {
            // A shape this kernel does not tile: fail the launch rather than skip elements.
#ifdef SK_ASCEND_SIMULATOR
            const sk_ascend_sim_core* c = sk_ascend_sim_core_now();
            c->ops->trap(c, "add_custom: n must be a multiple of blocks * TILE_NUM * BUFFER_NUM * 8");
#else
            trap();
#endif
        }
        const int64_t offset = static_cast<int64_t>(blockLength) * GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ float *)x + offset, blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + offset, blockLength);
        zGm.SetGlobalBuffer((__gm__ float *)z + offset, blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        const int32_t loopCount = TILE_NUM * BUFFER_NUM;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        DataCopy(xLocal, xGm[progress * tileLength], tileLength);  // MTE2
        DataCopy(yLocal, yGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);  // MTE2 -> V
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        LocalTensor<float> yLocal = inQueueY.DeQue<float>();
        LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();
        Add(zLocal, xLocal, yLocal, tileLength);  // V
        outQueueZ.EnQue<float>(zLocal);  // V -> MTE3
        inQueueX.FreeTensor(xLocal);  // the buffers go back to the copy-in
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        LocalTensor<float> zLocal = outQueueZ.DeQue<float>();
        DataCopy(zGm[progress * tileLength], zLocal, tileLength);  // MTE3
        outQueueZ.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    GlobalTensor<float> zGm;
    int32_t blockLength = 0;
    int32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
    op.Init(x, y, z);
#ifdef ADD_EARLY_START
    AscendC::WaitPreTaskEnd();
#endif
    op.Process();
#ifdef ADD_EARLY_START
    AscendC::SetNextTaskStart();
#endif
}
