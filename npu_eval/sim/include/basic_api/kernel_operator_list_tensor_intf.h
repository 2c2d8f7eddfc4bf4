// ListTensorDesc and TensorDesc: a kernel's dynamic list of tensors, decoded from the GM block
// the framework (or a host program) lays out:
//   word 0            ptrOffset: bytes from the block's start to its data-pointer array
//   then per tensor   one word (dim in the low 32 bits, index in the high 32) and dim shape words
//                     (a list without shapes: dim 0 and one 0xffffffff word)
//   at ptrOffset      one data pointer per tensor
// The words are read by the scalar unit, through the core's data cache, as on the device.
#pragma once

#include <cstdint>

#include "kernel_tensor.h"

namespace AscendC {

class ListTensorDesc;

template <class T>
class TensorDesc {
public:
    __aicore__ inline TensorDesc() {}
    __aicore__ inline ~TensorDesc() {}
    // Where GetDesc writes the shape: room for GetDim() values, which the kernel provides.
    __aicore__ inline void SetShapeAddr(uint64_t* shapePtr, SAGE_LOC) {
        if (shapePtr == nullptr) sage::sim::fail("api-misuse", loc, "TensorDesc::SetShapeAddr(nullptr)");
        shape_ = shapePtr;
    }
    __aicore__ inline uint64_t GetDim() { return dim_; }
    __aicore__ inline uint64_t GetIndex() { return index_; }
    __aicore__ inline uint64_t GetShape(uint32_t offset, SAGE_LOC) {
        if (offset >= dim_ || !shape_) {
            sage::sim::fail("api-misuse", loc, "TensorDesc::GetShape(%u) on a tensor of %u dimensions%s", offset, dim_,
                            shape_ ? "" : " with no shape buffer (SetShapeAddr)");
        }
        return shape_[offset];
    }
    __aicore__ inline __gm__ T* GetDataPtr() { return ptr_; }
    // A GlobalTensor over the data. Its size is sizeof(T) times the element count, as the device
    // library computes it (a byte count where SetGlobalBuffer takes elements).
    __aicore__ inline GlobalTensor<T> GetDataObj(SAGE_LOC) {
        uint64_t size = sizeof(T);
        for (uint32_t i = 0; i < dim_; ++i) size *= shape_ ? shape_[i] : 0;
        GlobalTensor<T> g;
        g.SetGlobalBuffer(ptr_, size, loc);
        return g;
    }

private:
    friend class ListTensorDesc;
    uint32_t dim_ = 0, index_ = 0;
    uint64_t* shape_ = nullptr;
    __gm__ T* ptr_ = nullptr;
};

class ListTensorDesc {
public:
    __aicore__ inline ListTensorDesc() {}
    __aicore__ inline ~ListTensorDesc() {}
    __aicore__ inline ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff,
                                     SAGE_LOC) {
        decode(data, length, shapeSize, loc);
    }
    __aicore__ inline void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff,
                                SAGE_LOC) {
        decode(data, length, shapeSize, loc);
    }
    // Tensor `index`'s dimension count, index, data pointer and shape (into desc's shape buffer).
    template <class T>
    __aicore__ inline void GetDesc(TensorDesc<T>& desc, uint32_t index, SAGE_LOC) {
        sage::sim::touch(loc);
        index_check("GetDesc", index, loc);
        if (dim_ == 0)
            sage::sim::fail("api-misuse", loc, "ListTensorDesc::GetDesc on a list that carries no shapes (dim 0): "
                            "use GetDataPtr");
        if (!desc.shape_)
            sage::sim::fail("api-misuse", loc, "ListTensorDesc::GetDesc into a TensorDesc with no shape buffer: call "
                            "SetShapeAddr with room for %u values first", dim_);
        desc.dim_ = dim_;
        desc.index_ = index;
        desc.ptr_ = reinterpret_cast<__gm__ T*>(word(ptrs_ + index, loc));
        const uint64_t* d = shapes_ + uint64_t(index) * stride_;
        for (uint32_t i = 0; i < dim_; ++i) desc.shape_[i] = word(d + 1 + i, loc);
    }
    template <class T>
    __aicore__ inline __gm__ T* GetDataPtr(uint32_t index, SAGE_LOC) {
        sage::sim::touch(loc);
        index_check("GetDataPtr", index, loc);
        return reinterpret_cast<__gm__ T*>(word(ptrs_ + index, loc));
    }
    __aicore__ inline uint32_t GetSize() { return count_; }

private:
    static uint64_t word(const uint64_t* p, sage::sim::SrcLoc loc) {
        auto* b = sage::sim::gm_check(p, 8, loc, false, "ListTensorDesc", 8);
        sage::sim::trace_instr(sage::sim::Pipe::S, "GlobalTensor::GetValue", "uint64", 1, 8, loc);
        return sage::sim::dcache_load(b, p, loc);
    }
    void index_check(const char* api, uint32_t index, sage::sim::SrcLoc loc) const {
        if (index < count_) return;
        sage::sim::fail("api-misuse", loc, "ListTensorDesc::%s(%u) on a list of %u tensors, in block %d", api, index,
                        count_, sage::sim::blk().idx);
    }
    void decode(__gm__ void* data, uint32_t length, uint32_t shapeSize, sage::sim::SrcLoc loc) {
        using sage::sim::fail;
        sage::sim::touch(loc);
        if (data == nullptr) fail("api-misuse", loc, "ListTensorDesc on a null GM address");
        auto* head = reinterpret_cast<const uint64_t*>(data);
        uint64_t ptrOffset = word(head, loc);
        shapes_ = head + 1;
        ptrs_ = head + ptrOffset / 8;
        uint64_t first = word(shapes_, loc);
        dim_ = uint32_t(first & 0xffffffff);
        stride_ = dim_ == 0 ? 2 : 1 + dim_;
        uint32_t high = uint32_t(first >> 32);
        count_ = high != 0 ? high : uint32_t(word(ptrs_ - stride_, loc) >> 32) + 1;
        bool consistent = dim_ != 0 ? ptrOffset >= 8 && count_ == (ptrOffset - 8) / (stride_ * 8)
                                    : word(shapes_ + 1, loc) == 0xffffffff && ptrOffset == 24;
        if (!consistent) {
            fail("api-misuse", loc, "ListTensorDesc: the GM block is not a tensor list (ptrOffset %llu, dim %u, %u "
                 "tensors do not fit together): word 0 is the byte offset of the pointer array, then per tensor "
                 "dim|index<<32 and dim shape words", (unsigned long long)ptrOffset, dim_, count_);
        }
        if (length != 0xffffffff && shapeSize != 0xffffffff && (count_ != shapeSize || length != ptrOffset + count_ * 8)) {
            fail("api-misuse", loc, "ListTensorDesc(data, length %u, shapeSize %u): the block holds %u tensors in "
                 "%llu bytes", length, shapeSize, count_, (unsigned long long)(ptrOffset + count_ * 8));
        }
    }

    const uint64_t* shapes_ = nullptr;  // the first tensor's dim|index word
    const uint64_t* ptrs_ = nullptr;    // the data-pointer array
    uint32_t dim_ = 0, stride_ = 0, count_ = 0;
};

}  // namespace AscendC
