//===- device_py.cpp - Devices, the arena and its views, DLPack -----------===//
//
// poolrt.Device(name) opens a backend (host, cuda, hip); device.arena(path)
// allocates and carves an artifact's arena on it; arena.plane / field /
// class_region return TensorViews that implement the DLPack protocol
// (__dlpack__, __dlpack_device__), so numpy.from_dlpack or torch.from_dlpack
// wraps the arena's memory without a copy. An arena with live DLPack
// exports refuses to close (the memory would go while a framework holds
// it); each export keeps the arena object alive until its consumer lets go.
//
//===----------------------------------------------------------------------===//

#include "poolrt/Arena.h"
#include "poolrt/Device.h"
#include "poolrt/Kernels.h"

#include "PyCommon.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>

namespace py = pybind11;
using namespace poolrt;
using namespace poolrt::py_common;

namespace {

// DLPack's ABI (dlpack.h, v0.8 "dltensor" capsules), declared here.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};

struct PyDevice {
  // Shared with the arenas carved on it: closing the device ends its use
  // from Python, while the backend lives until its last arena is released.
  std::shared_ptr<Device> dev;
  Device &get() {
    if (!dev)
      raise(Error{ErrorKind::State, "the device is closed"});
    return *dev;
  }
};

/// offset + n for a message, without overflowing on extreme arguments.
std::string endText(int64_t offset, int64_t n) {
  __int128 end = __int128(offset) + n;
  if (end > INT64_MAX || end < INT64_MIN)
    return std::to_string(offset) + " + " + std::to_string(n);
  return std::to_string(int64_t(end));
}

/// What a view's exports are counted on: an arena, or a staging buffer.
/// Neither can release its memory while a consumer holds an export.
struct Exporter {
  int64_t exports = 0;
  std::string what; // "the arena", "the staging buffer"
  virtual ~Exporter() = default;
  virtual bool isOpen() const = 0;
  void ensureOpen() const {
    if (!isOpen())
      raise(Error{ErrorKind::State, what + " is closed"});
  }
  void ensureNoExports() const {
    if (exports > 0)
      raise(Error{ErrorKind::State, what + " has " + std::to_string(exports) +
                                        " live DLPack exports; drop the arrays "
                                        "wrapping it before closing it"});
  }
};

struct PyStaging;

struct PyArena : Exporter {
  std::shared_ptr<Device> device; // declared first: outlives the arena
  std::unique_ptr<DeviceArena> arena;
  Artifact artifact;                       // its kernels, loaded at the first launch
  std::unique_ptr<KernelLauncher> launcher; // declared last: goes first

  PyArena(std::shared_ptr<Device> d, std::unique_ptr<DeviceArena> a, Artifact art)
      : device(std::move(d)), arena(std::move(a)), artifact(std::move(art)) {
    what = "the arena";
  }
  bool isOpen() const override { return arena != nullptr; }
  DeviceArena &get() {
    ensureOpen();
    return *arena;
  }
  void close() {
    ensureNoExports();
    launcher.reset();
    arena.reset();
  }
  const KernelInfo &kernel(const std::string &name) {
    DeviceArena &a = get();
    const KernelInfo *k = findKernel(a.layout().kernels, &KernelInfo::name, name);
    if (!k)
      k = a.layout().kernelByKind(name);
    if (!k)
      raise(Error{ErrorKind::Lookup, "the artifact has no kernel named or of kind '" +
                                         name + "'"});
    return *k;
  }
  void launch(const std::string &name, const std::vector<int32_t> &ids,
              PyStaging *staging);
};

/// Device memory for the staging side of a kernel (image_gather writes
/// there, image_scatter reads there): items * staging_stride bytes,
/// allocated on the arena's device, released by close() or when the
/// object goes.
struct PyStaging : Exporter {
  std::shared_ptr<Device> device;
  DevicePtr ptr;
  int64_t items = 0, stride = 0;
  std::string kernel; // the kernel it was sized for
  PyStaging(std::shared_ptr<Device> d, DevicePtr p, int64_t n, int64_t st, std::string k)
      : device(std::move(d)), ptr(p), items(n), stride(st), kernel(std::move(k)) {
    what = "the staging buffer";
  }
  // pybind moves the returned object into its holder: the moved-from one
  // must not release the memory.
  PyStaging(const PyStaging &) = delete;
  PyStaging(PyStaging &&o) noexcept
      : Exporter(o), device(std::move(o.device)), ptr(o.ptr), items(o.items),
        stride(o.stride), kernel(std::move(o.kernel)) {
    o.ptr = DevicePtr{};
  }
  ~PyStaging() override {
    if (ptr.addr)
      (void)device->release(ptr);
  }
  bool isOpen() const override { return ptr.addr != 0; }
  int64_t bytes() const { return items * stride; }
  void close() {
    ensureNoExports();
    if (ptr.addr)
      (void)device->release(ptr);
    ptr = DevicePtr{};
  }
  void checkSpan(int64_t offset, int64_t n, const char *op) const {
    ensureOpen();
    if (offset < 0 || n < 0 || offset > bytes() || n > bytes() - offset)
      raise(Error::invalid(std::string(op) + ": bytes [" + std::to_string(offset) + ", " +
                           endText(offset, n) + ") are outside the " +
                           std::to_string(bytes()) + "-byte staging buffer"));
  }
};

void PyArena::launch(const std::string &name, const std::vector<int32_t> &ids,
                     PyStaging *staging) {
  DeviceArena &a = get();
  const KernelInfo &k = kernel(name);
  DevicePtr stagingPtr{};
  if (k.stagingStride > 0) {
    if (!staging)
      raise(Error::invalid("launch: kernel '" + k.name + "' moves through staging: pass "
                           "staging=arena.staging('" + k.name + "', items)"));
    staging->ensureOpen();
    if (staging->stride != k.stagingStride)
      raise(Error::invalid("launch: the staging buffer was sized for '" + staging->kernel +
                           "' (" + std::to_string(staging->stride) + " bytes per item); '" +
                           k.name + "' moves " + std::to_string(k.stagingStride)));
    int64_t items = k.idsPerItem > 0 ? int64_t(ids.size()) / k.idsPerItem : 0;
    if (items > staging->items)
      raise(Error::invalid("launch: " + std::to_string(items) + " items need " +
                           std::to_string(items * k.stagingStride) + " staging bytes; "
                           "the buffer holds " + std::to_string(staging->items) +
                           " items (" + std::to_string(staging->bytes()) + " bytes)"));
    if (staging->device != device)
      raise(Error::invalid("launch: the staging buffer is on another device"));
    stagingPtr = staging->ptr;
  } else if (staging) {
    raise(Error::invalid("launch: kernel '" + k.name + "' has no staging side"));
  }
  if (!launcher) {
    check(device->loadKernels(artifact));
    launcher = std::make_unique<KernelLauncher>(*device, a.base());
  }
  check(launcher->run(k, ids, stagingPtr));
  check(device->synchronize());
}

struct PyView {
  TensorView v;
  std::string what;
  py::object owner; // the PyArena or PyStaging whose memory it views
  Exporter *ex;     // owner's C++ object
  /// Once numpy has been handed the view's address (__array_interface__),
  /// the view counts as an export until it dies: numpy keeps it as the
  /// array's base, so the arena cannot be closed under the array.
  bool pinned = false;

  PyView(TensorView view, std::string w, py::object o, Exporter *e)
      : v(std::move(view)), what(std::move(w)), owner(std::move(o)), ex(e) {}
  PyView(const PyView &) = delete;
  PyView(PyView &&o) noexcept
      : v(std::move(o.v)), what(std::move(o.what)), owner(std::move(o.owner)), ex(o.ex),
        pinned(o.pinned) {
    o.pinned = false;
  }
  ~PyView() {
    if (pinned && owner)
      ex->exports -= 1;
  }
};

/// What one export owns: its shape and strides, and a reference to the
/// arena or staging buffer that its consumer's deleter gives back.
struct ExportCtx {
  std::vector<int64_t> shape, strides;
  PyObject *owner;
  Exporter *ex;
};

void deleteExport(DLManagedTensor *t) {
  if (!t)
    return;
  auto *ctx = static_cast<ExportCtx *>(t->manager_ctx);
  // A consumer may let go on any thread.
  PyGILState_STATE g = PyGILState_Ensure();
  if (ctx) {
    ctx->ex->exports -= 1;
    Py_DECREF(ctx->owner);
    delete ctx;
  }
  delete t;
  PyGILState_Release(g);
}

void capsuleDestructor(PyObject *cap) {
  // Consumed capsules are renamed "used_dltensor"; their consumer deletes.
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto *t = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor"));
    if (t && t->deleter)
      t->deleter(t);
  } else {
    PyErr_Clear();
  }
}

py::object exportView(PyView &view) {
  view.ex->ensureOpen(); // a closed arena exports nothing
  auto *t = new DLManagedTensor();
  auto *ctx = new ExportCtx{view.v.shape, view.v.strides, view.owner.ptr(), view.ex};
  Py_INCREF(ctx->owner);
  view.ex->exports += 1;
  t->manager_ctx = ctx;
  t->deleter = &deleteExport;
  DLTensor &d = t->dl_tensor;
  d.data = reinterpret_cast<void *>(view.v.data);
  d.device = {view.v.deviceType, view.v.deviceId};
  d.ndim = int32_t(ctx->shape.size());
  d.dtype = {view.v.dtypeCode, view.v.dtypeBits, view.v.dtypeLanes};
  d.shape = ctx->shape.data();
  d.strides = ctx->strides.data();
  d.byte_offset = view.v.byteOffset;
  PyObject *cap = PyCapsule_New(t, "dltensor", &capsuleDestructor);
  if (!cap) {
    deleteExport(t);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

std::string dtypeName(const TensorView &v) {
  if (v.dtypeCode == 10)
    return "float8_e4m3fn";
  if (v.dtypeCode == 12)
    return "float8_e5m2";
  const char *code = v.dtypeCode == 0 ? "int" : v.dtypeCode == 1 ? "uint"
                     : v.dtypeCode == 2 ? "float" : v.dtypeCode == 4 ? "bfloat" : "code";
  return code + std::to_string(int(v.dtypeBits));
}

std::string viewRepr(const PyView &p) {
  std::string s = "<poolrt.TensorView " + p.what + " " + dtypeName(p.v) + "[";
  for (size_t i = 0; i < p.v.shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(p.v.shape[i]);
  return s + "] at byte " + std::to_string(p.v.byteOffset) + ">";
}

PyView makeView(py::object arena, Result<TensorView> v, std::string what) {
  Exporter *ex = &arena.cast<PyArena &>();
  return PyView(take(std::move(v)), std::move(what), std::move(arena), ex);
}

void checkSpan(const DeviceArena &a, int64_t offset, int64_t n, const char *op) {
  if (offset < 0 || n < 0 || offset > a.bytes() || n > a.bytes() - offset)
    raise(Error::invalid(std::string(op) + ": bytes [" + std::to_string(offset) + ", " +
                         endText(offset, n) + ") are outside the " +
                         std::to_string(a.bytes()) + "-byte arena"));
}

/// TensorView: a view of arena or staging memory, exported through DLPack
/// (and numpy's array interface on the host).
void bindTensorView(py::module_ &m) {
  py::class_<PyView>(m, "TensorView",
                     "A view of the arena as DLPack describes it: numpy.from_dlpack(view) "
                     "or torch.from_dlpack(view) wraps the memory without a copy")
      .def_property_readonly("shape", [](const PyView &p) { return p.v.shape; },
                             "in elements of the dtype")
      .def_property_readonly("strides", [](const PyView &p) { return p.v.strides; },
                             "in elements")
      .def_property_readonly("byte_offset", [](const PyView &p) { return p.v.byteOffset; },
                             "from the arena's base")
      .def_property_readonly("dtype", [](const PyView &p) {
        return py::make_tuple(int(p.v.dtypeCode), int(p.v.dtypeBits), int(p.v.dtypeLanes));
      }, "DLPack (code, bits, lanes): 0 int, 1 uint, 2 float, 4 bfloat, "
         "10 float8_e4m3fn, 12 float8_e5m2")
      .def_property_readonly("__array_interface__", [](PyView &p) {
        // Host memory only: numpy.asarray(view) is a writable zero-copy array
        // (numpy before 2.1 imports DLPack read-only).
        if (p.v.deviceType != 1)
          throw py::attribute_error("__array_interface__: the view is device memory; "
                                    "use __dlpack__");
        p.ex->ensureOpen();
        if (!p.pinned) {
          p.pinned = true;
          p.ex->exports += 1;
        }
        py::dict d;
        int64_t item = std::max<int64_t>(1, p.v.dtypeBits / 8);
        std::string kind = p.v.dtypeCode == 0 ? "i" : p.v.dtypeCode == 2 ? "f" : "u";
        if (p.v.dtypeCode == 4)
          kind = "V"; // bfloat16: raw 2-byte elements
        d["typestr"] = "<" + kind + std::to_string(item);
        py::list strides;
        for (int64_t st : p.v.strides)
          strides.append(st * item);
        d["shape"] = py::tuple(py::cast(p.v.shape));
        d["strides"] = py::tuple(strides);
        d["data"] = py::make_tuple(p.v.data + p.v.byteOffset, false);
        d["version"] = 3;
        return d;
      }, "numpy's array interface (host views only, writable)")
      .def("__dlpack__", [](PyView &p, py::kwargs) { return exportView(p); },
           "A 'dltensor' capsule of this view (zero copy); the arena stays alive "
           "until the consumer lets go")
      .def("__dlpack_device__", [](const PyView &p) {
        return py::make_tuple(p.v.deviceType, p.v.deviceId);
      }, "(device_type, device_id): 1 CPU, 2 CUDA, 10 ROCm")
      .def("__repr__", &viewRepr);

}

/// Staging: device memory for the staging side of a kernel.
void bindStaging(py::module_ &m) {
  py::class_<PyStaging>(m, "Staging",
                        "Device memory for the staging side of a kernel, from "
                        "arena.staging(kernel, items): items rows of staging_stride "
                        "bytes. A context manager that releases it; view() is a "
                        "DLPack view [items, staging_stride] of uint8")
      .def_property_readonly("items", [](const PyStaging &s) { return s.items; },
                             "kernel items it holds")
      .def_property_readonly("staging_stride", [](const PyStaging &s) { return s.stride; },
                             "bytes per item")
      .def_property_readonly("bytes", &PyStaging::bytes, "items * staging_stride")
      .def_property_readonly("kernel", [](const PyStaging &s) { return s.kernel; },
                             "the kernel it was sized for")
      .def_readonly("exports", &PyStaging::exports, "live DLPack exports")
      .def("view", [](py::object self) {
        PyStaging &s = self.cast<PyStaging &>();
        s.ensureOpen();
        TensorView v;
        v.data = s.ptr.addr;
        v.deviceType = dlpackDevice(*s.device);
        v.shape = {s.items, s.stride};
        v.strides = {s.stride, 1};
        Exporter *ex = &s;
        return PyView(std::move(v), "staging '" + s.kernel + "'", self, ex);
      }, "A DLPack view of the buffer: [items, staging_stride] bytes")
      .def("read", [](PyStaging &s, int64_t offset, int64_t n) {
        if (n == -1 && offset >= 0) // the rest of the buffer
          n = std::max<int64_t>(0, s.bytes() - offset);
        s.checkSpan(offset, n, "read");
        std::string out(size_t(n), '\0');
        check(s.device->copyFromDevice(out.data(), s.ptr + uint64_t(offset), uint64_t(n)));
        return py::bytes(out);
      }, py::arg("offset") = 0, py::arg("n") = -1,
         "Bytes [offset, offset + n) through the device (n=-1: to the end)")
      .def("write", [](PyStaging &s, int64_t offset, py::bytes data) {
        std::string b = data;
        s.checkSpan(offset, int64_t(b.size()), "write");
        check(s.device->copyToDevice(s.ptr + uint64_t(offset), b.data(), b.size()));
      }, py::arg("offset"), py::arg("data"), "Write bytes at offset through the device")
      .def("close", &PyStaging::close,
           "Release the memory; StateError while DLPack exports are alive")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyStaging &s, py::args) { s.close(); })
      .def("__repr__", [](const PyStaging &s) {
        if (!s.isOpen())
          return std::string("<poolrt.Staging closed>");
        return "<poolrt.Staging for '" + s.kernel + "', " + std::to_string(s.items) +
               " x " + std::to_string(s.stride) + " bytes>";
      });
}

/// Arena.launch and Arena.staging: running the generated kernels.
void addArenaKernels(py::class_<PyArena> &cls) {
  cls
      .def("launch", [](PyArena &a, const std::string &kernel, const std::vector<int32_t> &ids,
                        PyStaging *staging) { a.launch(kernel, ids, staging); },
           py::arg("kernel"), py::arg("ids"), py::arg("staging") = nullptr,
           "Run a generated kernel on a batch and wait for it.\n\n"
           "Args:\n"
           "    kernel: its name, or its kind ('image_store', 'block_copy', "
           "'image_gather', ...).\n"
           "    ids: ids_per_item ids per item, item-major (artifact.kernels[i]"
           "['id_tuple'] says what each position names).\n"
           "    staging: for a kernel with a staging side (image_gather writes item i "
           "at staging byte i * staging_stride, image_scatter reads there): a "
           "buffer from arena.staging(kernel, items).\n\n"
           "Raises:\n"
           "    InvalidId: an id outside its position's range, an entity written "
           "twice or both read and written in the batch; nothing is launched.\n"
           "    InvalidArgument: a partial tuple, a missing or too small staging buffer.")
      .def("staging", [](py::object self, const std::string &kernel, int64_t items) {
        PyArena &a = self.cast<PyArena &>();
        const KernelInfo &k = a.kernel(kernel);
        if (k.stagingStride <= 0)
          raise(Error::invalid("staging: kernel '" + k.name + "' has no staging side"));
        if (items < 1 || items > (int64_t(1) << 40) / k.stagingStride)
          raise(Error::invalid("staging: items must be in [1, " +
                               std::to_string((int64_t(1) << 40) / k.stagingStride) +
                               "], got " + std::to_string(items)));
        DevicePtr p = take(a.device->allocate(uint64_t(items * k.stagingStride)));
        return PyStaging(a.device, p, items, k.stagingStride, k.name);
      }, py::arg("kernel"), py::arg("items") = 1,
         "Device memory for `items` items of a staging kernel (items * its "
         "staging_stride bytes) on the arena's device");
}

/// Arena.slot_origin and the TensorViews of the arena: planes, class regions,
/// state fields.
void addArenaViews(py::class_<PyArena> &cls) {
  cls
      .def_property_readonly("slot_origin", [](PyArena &a) -> int64_t {
        const SolvedLayout &L = a.get().layout();
        if (!L.rowSpace || !L.rowSpace->slotPositions || !L.rowSpace->planeRows)
          raise(Error{ErrorKind::Lookup, "the layout has no row space (no slots)"});
        return *L.rowSpace->slotPositions - *L.rowSpace->planeRows / L.rowSpace->slotRows;
      }, "A row space's first slot position: a field view's entry e is physical slot "
         "slot_origin + e (CacheManager.slot_kernel_id)")
      .def("plane", [](py::object self, const std::string &name, bool typed) {
        DeviceArena &a = self.cast<PyArena &>().get();
        return makeView(self, typed ? a.typedPlane(name) : a.plane(name),
                        "plane '" + name + "'");
      }, py::arg("name"), py::arg("typed") = false,
         "A row-space plane: [plane_rows, row_bytes] bytes, or with typed=True in its "
         "declared dtype, [plane_rows, row_bytes / item] (fp8 as DLPack's "
         "kDLFloat8_e4m3fn / e5m2 codes, as torch reads them; bf16 as kDLBfloat)")
      .def("class_region", [](py::object self, const std::string &name) {
        return makeView(self, self.cast<PyArena &>().get().classRegion(name),
                        "class '" + name + "'");
      }, py::arg("name"), "An entry class's region: [entries, entry_bytes] bytes")
      .def("field", [](py::object self, const std::string &name) {
        return makeView(self, self.cast<PyArena &>().get().field(name), "field '" + name + "'");
      }, py::arg("name"),
         "A state field: [layers, entries (or slot positions), *shape] of its dtype");
}

/// Arena's byte reads and writes through the device, close, the context
/// manager and repr.
void addArenaIOAndLifetime(py::class_<PyArena> &cls) {
  cls
      .def("read", [](PyArena &a, int64_t offset, int64_t n) {
        DeviceArena &arena = a.get();
        checkSpan(arena, offset, n, "read");
        std::string out(size_t(n), '\0');
        check(a.device->copyFromDevice(out.data(), arena.base() + uint64_t(offset), uint64_t(n)));
        return py::bytes(out);
      }, py::arg("offset"), py::arg("n"), "Bytes [offset, offset + n) through the device")
      .def("write", [](PyArena &a, int64_t offset, py::bytes data) {
        DeviceArena &arena = a.get();
        std::string s = data;
        checkSpan(arena, offset, int64_t(s.size()), "write");
        check(a.device->copyToDevice(arena.base() + uint64_t(offset), s.data(), s.size()));
      }, py::arg("offset"), py::arg("data"), "Write bytes at offset through the device")
      .def("close", &PyArena::close,
           "Release the allocation; StateError while DLPack exports are alive")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyArena &a, py::args) { a.close(); })
      .def("__repr__", [](PyArena &a) {
        if (!a.arena)
          return std::string("<poolrt.Arena closed>");
        return "<poolrt.Arena " + a.arena->layout().model + ", " +
               std::to_string(a.arena->bytes()) + " bytes, " + std::to_string(a.exports) +
               " exports>";
      });
}

/// Arena: one allocation of an artifact, carved at the compiled offsets.
void bindArena(py::module_ &m) {
  py::class_<PyArena> cls(m, "Arena",
                          "One allocation of an artifact's allocation_bytes, carved at the "
                          "compiled offsets; a context manager that releases it");
  cls
      .def_property_readonly("bytes", [](PyArena &a) { return a.get().bytes(); },
                             "the artifact's allocation_bytes")
      .def_property_readonly("base", [](PyArena &a) { return a.get().base().addr; },
                             "the device address of byte 0")
      .def_property_readonly("field_names", [](PyArena &a) { return a.get().fieldNames(); },
                             "the state fields field() can view")
      .def_readonly("exports", &PyArena::exports, "live DLPack exports");
  addArenaKernels(cls);
  addArenaViews(cls);
  addArenaIOAndLifetime(cls);
}

/// Device: a backend (host, cuda, hip), the factory of arenas.
void bindDeviceClass(py::module_ &m) {
  py::class_<PyDevice>(m, "Device",
                       "A device backend (host, cuda, hip); a context manager that "
                       "closes it. Absent backends raise StateError naming what "
                       "is missing.")
      .def(py::init([](const std::string &name) {
             return PyDevice{std::shared_ptr<Device>(take(openDevice(name)))};
           }),
           py::arg("name") = "host")
      .def_property_readonly("name", [](PyDevice &d) { return std::string(d.get().name()); },
                             "'host', 'cuda' or 'hip'")
      .def_property_readonly("description", [](PyDevice &d) { return d.get().description(); },
                             "what the backend runs on (the GPU's name, the driver)")
      .def("arena", [](PyDevice &d, const std::string &artifact) {
        Artifact a = takeArtifact(readArtifactFile(artifact));
        auto arena = DeviceArena::create(d.get(), a);
        if (!arena.ok())
          raise(arena.error());
        return PyArena(d.dev, std::make_unique<DeviceArena>(arena.take()), std::move(a));
      }, py::arg("artifact"),
         "Allocate and carve the artifact's arena (allocation_bytes) on this device")
      .def("close", [](PyDevice &d) { d.dev.reset(); },
           "End the device's use from Python; arenas already carved stay valid "
           "until they are closed")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyDevice &d, py::args) { d.dev.reset(); })
      .def("__repr__", [](PyDevice &d) {
        return d.dev ? "<poolrt.Device " + std::string(d.dev->name()) + ">"
                     : std::string("<poolrt.Device closed>");
      });
}

} // namespace

void bindDevices(py::module_ &m) {
  // The returned types first: a signature names only types already bound.
  bindTensorView(m);
  bindStaging(m);
  bindArena(m);
  bindDeviceClass(m);
}
