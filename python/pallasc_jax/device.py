"""Target device descriptions, for tracing GPU kernels without that GPU.

JAX's Mosaic GPU ops ask the device while they trace: `hopper_matmul_mgpu`
sizes its persistent grid from the SM count
(`jax.extend.backend.get_default_device().core_count`, or the abstract mesh's
device), `attention_mgpu` reads the CUDA runtime version
(`jax._src.lib.cuda_versions.cuda_runtime_get_version()`, None on a CPU-only
jaxlib), and Mosaic GPU code checks the compute capability. `answering(dev)`
makes those queries answer from a `Device` for the duration of a trace, and
restores them afterwards; the kernel code is untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys


@dataclasses.dataclass(frozen=True)
class Device:
  """What the traced ops may ask of the GPU they will run on."""
  name: str
  sm_count: int
  compute_capability: tuple  # (major, minor)
  cuda_version: int  # CUDA runtime version as CUDA encodes it (13000 = 13.0)
  device_kind: str

  @property
  def capability_text(self) -> str:
    return f"{self.compute_capability[0]}.{self.compute_capability[1]}"


DEVICES = {
    "h100": Device("h100", 132, (9, 0), 13000, "NVIDIA H100 80GB HBM3"),
    "h200": Device("h200", 132, (9, 0), 13000, "NVIDIA H200"),
    "b200": Device("b200", 148, (10, 0), 13000, "NVIDIA B200"),
}


def parse(text: str) -> Device:
  """`h100`, or `NAME:sms=N,cc=9.0,cuda=12080` (unset fields from NAME, or
  from h100 when NAME is not known)."""
  if isinstance(text, Device):
    return text
  name, _, rest = str(text).partition(":")
  name = name.strip().lower()
  if not rest:
    if name not in DEVICES:
      raise ValueError(f"unknown device '{text}': expected one of "
                       f"{', '.join(sorted(DEVICES))} or "
                       "NAME:sms=N,cc=MAJOR.MINOR,cuda=VERSION")
    return DEVICES[name]
  base = DEVICES.get(name, DEVICES["h100"])
  fields = {}
  for item in rest.split(","):
    k, eq, v = item.partition("=")
    k = k.strip()
    try:
      if not eq:
        raise ValueError
      if k == "sms":
        fields["sm_count"] = int(v)
        if fields["sm_count"] <= 0:
          raise ValueError
      elif k == "cc":
        major, minor = v.split(".")
        fields["compute_capability"] = (int(major), int(minor))
      elif k == "cuda":
        fields["cuda_version"] = int(v)
      else:
        raise KeyError(k)
    except KeyError:
      raise ValueError(f"invalid device '{text}': unknown field '{k}' "
                       "(expected sms, cc, cuda)") from None
    except ValueError:
      raise ValueError(f"invalid device '{text}': '{item}' is not "
                       "sms=POSITIVE_INT, cc=MAJOR.MINOR or cuda=INT") from None
  return dataclasses.replace(base, name=name, **fields)


class _FakeJaxDevice:
  """Stands for `jax.Device` where the ops read device facts."""

  def __init__(self, dev: Device):
    self.core_count = dev.sm_count
    self.compute_capability = dev.capability_text
    self.device_kind = dev.device_kind
    self.platform = "gpu"
    self.id = 0

  def __repr__(self):
    return f"pallasc_jax.device({self.device_kind})"


class _CudaVersions:
  """Stands for `jax._src.lib.cuda_versions` (None on CPU jaxlibs)."""

  def __init__(self, dev: Device):
    self._v = dev.cuda_version

  def cuda_runtime_get_version(self):
    return self._v

  def cuda_driver_get_version(self):
    return self._v

  def cuda_compute_capability(self, _device=0):
    return 0  # unused by the ops; present for completeness


@contextlib.contextmanager
def answering(dev: Device | None):
  """Within the block, JAX's device queries answer from `dev`."""
  if dev is None:
    yield
    return
  from jax.extend import backend
  from jax._src import lib as jax_lib
  fake = _FakeJaxDevice(dev)
  versions = _CudaVersions(dev)
  saved = [(backend, "get_default_device", backend.get_default_device),
           (jax_lib, "cuda_versions", getattr(jax_lib, "cuda_versions", None))]
  # Modules that did `from jax._src.lib import cuda_versions` hold their own
  # binding (attention_mgpu asserts it is not None).
  real = getattr(jax_lib, "cuda_versions", None)
  for mod in list(sys.modules.values()):
    if mod is None or mod is jax_lib:
      continue
    d = getattr(mod, "__dict__", None)
    if d and "cuda_versions" in d and d["cuda_versions"] is real and (
        getattr(mod, "__name__", "").startswith("jax")):
      saved.append((mod, "cuda_versions", real))
  try:
    backend.get_default_device = lambda: fake
    for obj, attr, _ in saved[1:]:
      setattr(obj, attr, versions)
    yield
  finally:
    for obj, attr, value in saved:
      setattr(obj, attr, value)
