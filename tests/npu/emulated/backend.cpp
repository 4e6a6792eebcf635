// The emulated "npu": a PrivateUse1 backend on host memory for CPU-only torch, just enough for
// airfuse's binding and its tests (tests/npu/emulated_npu.py renames it "npu" and loads it).
//   - allocator: 64-byte-aligned host memory; allocations are recorded so a test can check that a
//     pointer (the aclnn workspace) came from this device's allocator, and with which size;
//   - device guard: one device, streams per thread as ids, each with a distinct native handle
//     (standing in for an aclrtStream) so a test can see which stream reached the aclnn call;
//   - the aten ops that have no generic implementation (allocation, views, copies, resize);
//     every other aten op runs through the CPU fallback.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/TensorShape.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/headeronly/version.h>
#include <torch/library.h>

namespace {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;
constexpr size_t kAlign = 64;
constexpr int kMaxStreams = 64;

std::mutex gAllocMutex;
std::map<void*, size_t> gAllocated;  // start -> size of the last allocation made there

void FreeHost(void* p) { std::free(p); }

struct HostAllocator final : c10::Allocator {
    c10::DataPtr allocate(size_t n) override {
        void* p = n ? std::aligned_alloc(kAlign, (n + kAlign - 1) / kAlign * kAlign) : nullptr;
        TORCH_CHECK(!n || p, "emulated npu: out of host memory allocating ", n, " bytes");
        if (p) {
            std::lock_guard<std::mutex> lock(gAllocMutex);
            gAllocated[p] = n;
        }
        return {p, p, &FreeHost, c10::Device(kNpu, 0)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &FreeHost; }
    void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};
HostAllocator gAllocator;

// Native stream handles: any distinct non-null addresses do.
struct FakeStream {
    int64_t id;
};
FakeStream gStreams[kMaxStreams];
thread_local c10::StreamId tStream = 0;
std::atomic<c10::StreamId> gNextStream{1};

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
    c10::DeviceType type() const override { return kNpu; }
    c10::Device exchangeDevice(c10::Device d) const override {
        setDevice(d);
        return c10::Device(kNpu, 0);
    }
    c10::Device getDevice() const override { return c10::Device(kNpu, 0); }
    void setDevice(c10::Device d) const override {
        TORCH_CHECK(d.type() == kNpu && d.index() <= 0, "emulated npu: there is one device (npu:0), got ", d);
    }
    void uncheckedSetDevice(c10::Device) const noexcept override {}
    c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::UNSAFE, Index(d), tStream); }
    c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::UNSAFE, Index(d), 0); }
    c10::Stream getNewStream(c10::Device d, int) const override {
        const c10::StreamId id = gNextStream++;
        TORCH_CHECK(id < kMaxStreams, "emulated npu: at most ", kMaxStreams, " streams");
        return c10::Stream(c10::Stream::UNSAFE, Index(d), id);
    }
    c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getNewStream(d, 0); }
    c10::Stream exchangeStream(c10::Stream s) const override {
        const c10::Stream old = getStream(s.device());
        tStream = s.id();
        return old;
    }
    c10::DeviceIndex deviceCount() const noexcept override { return 1; }
#if !(TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 11)  // torch 2.10 has no such hook (the binding uses ids there)
    void* getStreamNativeHandle(const c10::Stream s) const override { return &gStreams[s.id()]; }
#endif
    bool queryStream(const c10::Stream&) const override { return true; }
    void synchronizeStream(const c10::Stream&) const override {}
    void synchronizeDevice(const c10::DeviceIndex) const override {}
    void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
    void block(void*, const c10::Stream&) const override {}
    bool queryEvent(void*) const override { return true; }
    void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}

private:
    static c10::Device Index(c10::Device d) { return c10::Device(kNpu, d.index() < 0 ? 0 : d.index()); }
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

struct Hooks final : at::PrivateUse1HooksInterface {
    bool isBuilt() const override { return true; }
    bool isAvailable() const override { return true; }
    bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
    at::Device getDeviceFromPtr(void*) const override { return c10::Device(kNpu, 0); }
    const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override { return at::detail::getDefaultCPUGenerator(); }
};

bool RegisterHooks() {
    static Hooks hooks;
    at::RegisterPrivateUse1HooksInterface(&hooks);
    return true;
}
const bool gHooksRegistered = RegisterHooks();

// A CPU tensor aliasing an npu tensor's host memory.
at::Tensor HostAlias(const at::Tensor& t) {
    if (t.is_cpu()) return t;
    return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(at::kCPU));
}

at::Tensor Empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>, std::optional<at::Device>,
                 std::optional<bool>, std::optional<at::MemoryFormat> format) {
    return at::detail::empty_generic(size, &gAllocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                     c10::dtype_or_default(dtype), format);
}

at::Tensor EmptyStrided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                        std::optional<at::Device>, std::optional<bool>) {
    return at::detail::empty_strided_generic(size, stride, &gAllocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                             c10::dtype_or_default(dtype));
}

at::Tensor CopyFrom(const at::Tensor& self, const at::Tensor& dst, bool) {
    if (self.numel()) HostAlias(dst).copy_(HostAlias(self));
    return dst;
}

const at::Tensor& Resize(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat>) {
    const size_t needed = at::detail::computeStorageNbytesContiguous(size, self.itemsize(), self.storage_offset());
    c10::Storage storage = self.storage();
    if (needed > storage.nbytes()) {
        c10::DataPtr bigger = gAllocator.allocate(needed);
        if (storage.nbytes()) std::memcpy(bigger.get(), storage.data(), storage.nbytes());
        storage.set_data_ptr_noswap(std::move(bigger));
        storage.set_nbytes(needed);
    }
    self.unsafeGetTensorImpl()->set_sizes_contiguous(size);
    return self;
}

at::Tensor CopyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
    Resize(dst, self.sizes(), std::nullopt);
    return CopyFrom(self, dst, false);
}

at::Scalar LocalScalarDense(const at::Tensor& self) { return HostAlias(self).item(); }

at::Tensor AsStrided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<int64_t> offset) {
    return at::native::as_strided_tensorimpl(self, size, stride, offset);
}

at::Tensor& SetStorage(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size, c10::IntArrayRef stride) {
    self.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(source));
    self.unsafeGetTensorImpl()->set_sizes_and_strides(size, stride, offset);
    return self;
}

}  // namespace

extern "C" {
// The size of the last allocation (live or freed) this device made at p, or 0 when it made none.
size_t emulated_npu_allocation_size(void* p) {
    std::lock_guard<std::mutex> lock(gAllocMutex);
    auto it = gAllocated.find(p);
    return it == gAllocated.end() ? 0 : it->second;
}
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
    m.impl("empty.memory_format", &Empty);
    m.impl("empty_strided", &EmptyStrided);
    m.impl("_copy_from", &CopyFrom);
    m.impl("_copy_from_and_resize", &CopyFromAndResize);
    m.impl("_local_scalar_dense", &LocalScalarDense);
    m.impl("resize_", &Resize);
    m.impl("as_strided", &AsStrided);
    m.impl("view", &at::native::view);
    m.impl("_reshape_alias", &at::native::_reshape_alias);
    m.impl("set_.source_Storage_storage_offset", &SetStorage);
}

namespace {
void CpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { at::native::cpu_fallback(op, stack); }
}  // namespace

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&CpuFallback>()); }
