"""Bazel rules for pallasc: compile a Pallas kernel into a C/C++ library.

    load("@pallasc//:defs.bzl", "pallasc_kernel")

    pallasc_kernel(
        name = "vector_add",              # cc_library: #include "vector_add.h"
        kernel = "add.mlir",
        spec = "add.json",
        targets = ["cpu"],                 # cpu, cuda:<arch>, rocm:<arch>
        transforms = ["--vmap", "0,0:4"],  # pallasc transform flags
        opts = ["-O3"],                    # other pallasc flags
    )

mirrors CMake's pallasc_add_kernel() (docs/integration.md): one action runs
`pallasc KERNEL --spec SPEC --name NAME --target ... --emit=header,lib
TRANSFORMS OPTS -o <package output dir>`, `NAME` is a cc_library whose
header is NAME.h and whose archive is NAME.a, linked before the launch
runtime (and -ldl), and `NAME_artifacts` is a filegroup of the manifest and
the per-target artifacts (NAME.cpu.o, NAME.<arch>.ptx, NAME.<arch>.hsaco).

pallasc and every tool and library it uses (the launch runtime, ptxas,
libdevice, ld.lld, the ROCm device libraries) come from the registered
`pallasc_toolchain` (see deps.bzl for one made from an installation). The
action runs pallasc with PALLASC_EXPLICIT_TOOLS=1 and each tool declared in
its variable (or `none`): pallasc then looks nowhere else (not PATH, not
CUDA_HOME/bin, not /usr/local/cuda or /opt/rocm), so a tool the toolchain
does not declare is missing in the action, never taken from the host.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

TOOLCHAIN_TYPE = str(Label("//:toolchain_type"))

PallascToolchainInfo = provider(
    doc = "What a pallasc_kernel action runs and declares as inputs.",
    fields = {
        "pallasc": "File: the pallasc executable",
        "launch": "CcInfo: the launch runtime every generated launcher links",
        "inputs": "depset of File: every tool and library the action reads",
        "env": "dict: PALLASC_EXPLICIT_TOOLS and the variable of each tool",
    },
)

_LIBDEVICE_SUFFIX = "/nvvm/libdevice/libdevice.10.bc"
_ROCM_BITCODE_SUFFIX = "/amdgcn/bitcode"

def _pallasc_toolchain_impl(ctx):
    inputs = [ctx.executable.pallasc]
    env = {"PALLASC_EXPLICIT_TOOLS": "1"}
    for tool, variable in [(ctx.executable.ptxas, "PTXAS"),
                           (ctx.executable.ld_lld, "PALLASC_LD_LLD")]:
        if tool == None:
            env[variable] = "none"
        else:
            inputs.append(tool)
            env[variable] = tool.path

    libdevice = ctx.file.libdevice
    if libdevice == None:
        env["CUDA_HOME"] = "none"
    else:
        if not libdevice.path.endswith(_LIBDEVICE_SUFFIX):
            fail("pallasc_toolchain %s: libdevice must be ROOT%s (pallasc " %
                 (ctx.label, _LIBDEVICE_SUFFIX) +
                 "links it from a toolkit root), got " + libdevice.path)
        inputs.append(libdevice)
        env["CUDA_HOME"] = libdevice.path[:-len(_LIBDEVICE_SUFFIX)]

    bitcode = ctx.files.rocm_device_libs
    if not bitcode:
        env["ROCM_PATH"] = "none"
    else:
        ocml = [f for f in bitcode if f.basename == "ocml.bc"]
        if len(ocml) != 1 or not ocml[0].dirname.endswith(_ROCM_BITCODE_SUFFIX):
            fail("pallasc_toolchain %s: rocm_device_libs must hold " % ctx.label +
                 "ROOT%s/ocml.bc and the other bitcode beside it" %
                 _ROCM_BITCODE_SUFFIX)
        root = ocml[0].dirname
        for f in bitcode:
            if f.dirname != root:
                fail("pallasc_toolchain %s: rocm_device_libs: %s is not in %s" %
                     (ctx.label, f.path, root))
        inputs.extend(bitcode)
        env["ROCM_PATH"] = root[:-len(_ROCM_BITCODE_SUFFIX)]

    return [platform_common.ToolchainInfo(
        pallasc_info = PallascToolchainInfo(
            pallasc = ctx.executable.pallasc,
            launch = ctx.attr.launch[CcInfo],
            inputs = depset(inputs, transitive = [
                ctx.attr.pallasc[DefaultInfo].default_runfiles.files,
            ] if ctx.attr.pallasc[DefaultInfo].default_runfiles else []),
            env = env,
        ),
    )]

def _tool_attr(doc, mandatory = False):
    """An executable tool of the toolchain, run on the exec platform."""
    return attr.label(
        mandatory = mandatory,
        executable = True,
        cfg = "exec",
        allow_files = True,
        doc = doc,
    )

pallasc_toolchain = rule(
    implementation = _pallasc_toolchain_impl,
    doc = "The pallasc executable, its launch runtime and the GPU tools, " +
          "for toolchain(toolchain_type = \"@pallasc//:toolchain_type\"). " +
          "A tool left out is declared absent (`none`): its targets then " +
          "fail (ld.lld) or lose that feature (ptxas: no PTX validation; " +
          "libdevice, device libraries: no math functions).",
    attrs = {
        "pallasc": _tool_attr("the pallasc executable", mandatory = True),
        "launch": attr.label(
            mandatory = True,
            providers = [CcInfo],
            doc = "the launch runtime (libPallascLaunch.a, linking -ldl) " +
                  "as a cc_library",
        ),
        "ptxas": _tool_attr("ptxas, which validates the PTX of cuda targets"),
        "libdevice": attr.label(
            allow_single_file = [".bc"],
            doc = "ROOT/nvvm/libdevice/libdevice.10.bc (math on cuda targets)",
        ),
        "ld_lld": _tool_attr(
            "ld.lld, which links the code objects of rocm targets",
        ),
        "rocm_device_libs": attr.label_list(
            allow_files = [".bc"],
            doc = "ROOT/amdgcn/bitcode/*.bc (ocml, ockl, ...; math on rocm " +
                  "targets)",
        ),
    },
)

def _artifact_name(name, target):
    if target == "cpu":
        return name + ".cpu.o"
    vendor, _, arch = target.partition(":")
    if vendor == "cuda" and arch:
        return name + "." + arch + ".ptx"
    if vendor == "rocm" and arch:
        return name + "." + arch + ".hsaco"
    if target == "tpu":
        return None
    fail("pallasc_kernel: unknown target '%s' (expected cpu, cuda:<arch>, " %
         target + "rocm:<arch> or tpu)")

def _pallasc_compile_impl(ctx):
    toolchain = ctx.toolchains[TOOLCHAIN_TYPE].pallasc_info
    name = ctx.attr.kernel_name
    targets = ctx.attr.targets
    if not [t for t in targets if t == "cpu" or t.startswith("cuda:") or
                                  t.startswith("rocm:")]:
        fail("pallasc_kernel %s: targets must contain cpu, a cuda:<arch> or " %
             ctx.label + "a rocm:<arch>: pallasc generates launchers for " +
             "those only (got %s)" % targets)

    header = ctx.actions.declare_file(name + ".h")
    archive = ctx.actions.declare_file(name + ".a")
    manifest = ctx.actions.declare_file(name + ".manifest.json")
    artifacts = [manifest]
    for t in targets:
        file = _artifact_name(name, t)
        if file:
            artifacts.append(ctx.actions.declare_file(file))
    if "tpu" in targets:
        artifacts.append(ctx.actions.declare_file(name + ".tpu.mlirbc"))
        artifacts.append(ctx.actions.declare_file(name + ".tpu.json"))

    args = ctx.actions.args()
    args.add(ctx.file.kernel)
    args.add("--spec", ctx.file.spec)
    args.add("--name", name)
    for t in targets:
        args.add("--target", t)
    args.add("--emit=header,lib")
    args.add_all(ctx.attr.transforms)
    args.add_all(ctx.attr.opts)
    args.add("-o", header.dirname)
    args.add("--quiet")
    ctx.actions.run(
        executable = toolchain.pallasc,
        arguments = [args],
        inputs = depset([ctx.file.kernel, ctx.file.spec],
                        transitive = [toolchain.inputs]),
        outputs = [header, archive] + artifacts,
        env = toolchain.env,
        mnemonic = "Pallasc",
        progress_message = "pallasc %s (%s)" % (name, ", ".join(targets)),
    )

    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    library = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        static_library = archive,
    )
    own = CcInfo(
        compilation_context = cc_common.create_compilation_context(
            headers = depset([header]),
            includes = depset([header.dirname]),
        ),
        linking_context = cc_common.create_linking_context(
            linker_inputs = depset([cc_common.create_linker_input(
                owner = ctx.label,
                libraries = depset([library]),
            )]),
        ),
    )

    # The kernel's archive first, then the runtime it calls (and -ldl).
    return [
        DefaultInfo(files = depset([header, archive])),
        cc_common.merge_cc_infos(direct_cc_infos = [own],
                                 cc_infos = [toolchain.launch]),
        OutputGroupInfo(
            header = depset([header]),
            archive = depset([archive]),
            artifacts = depset(artifacts),
        ),
    ]

_pallasc_compile = rule(
    implementation = _pallasc_compile_impl,
    attrs = {
        "kernel": attr.label(mandatory = True, allow_single_file = [".mlir"]),
        "spec": attr.label(mandatory = True, allow_single_file = [".json"]),
        "kernel_name": attr.string(mandatory = True),
        "targets": attr.string_list(mandatory = True, allow_empty = False),
        "transforms": attr.string_list(),
        "opts": attr.string_list(),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    toolchains = [TOOLCHAIN_TYPE, "@bazel_tools//tools/cpp:toolchain_type"],
    fragments = ["cpp"],
)

_IDENTIFIER_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"

def _is_c_identifier(s):
    if not s or s[0] not in _IDENTIFIER_START:
        return False
    for c in s.elems():
        if c not in _IDENTIFIER_START and c not in "0123456789":
            return False
    return True

def pallasc_kernel(name, kernel, spec, targets, transforms = [], opts = [],
                   kernel_name = None, **kwargs):
    """A Pallas kernel compiled by pallasc, as a cc_library.

    Args:
      name: the cc_library; its header is NAME.h, its archive NAME.a.
      kernel: the kernel, textual MLIR (`pallas.kernel`).
      spec: the grid spec JSON (pallasc.gridspec/v1).
      targets: pallasc --target values; one of cpu, cuda:<arch>,
        rocm:<arch> at least (launchers are generated for those).
      transforms: pallasc transform flags (--vmap ..., --jvp, ...), in order.
      opts: other pallasc flags (-O3, --strict-fp, ...); none that change
        which files are written (--emit, -o, --name).
      kernel_name: the C name of the outputs and the entry points
        (NAME_cpu, NAME_cuda, NAME_rocm); default `name`. Never the spec's
        `name`, so editing the spec cannot change the outputs.
      **kwargs: visibility, tags, testonly, ... of the cc_library.
    """
    kernel_name = kernel_name or name
    if not _is_c_identifier(kernel_name):
        fail("pallasc_kernel(%s): the kernel name must be a C identifier " % name +
             "(it names NAME.h and NAME_cpu), got '%s'; pass kernel_name" %
             kernel_name)
    compile_kwargs = {
        k: v
        for k, v in kwargs.items()
        if k in ["tags", "testonly", "compatible_with", "restricted_to"]
    }
    _pallasc_compile(
        name = name + "_pallasc",
        kernel = kernel,
        spec = spec,
        kernel_name = kernel_name,
        targets = targets,
        transforms = transforms,
        opts = opts,
        visibility = ["//visibility:private"],
        **compile_kwargs
    )
    native.filegroup(
        name = name + "_artifacts",
        srcs = [":" + name + "_pallasc"],
        output_group = "artifacts",
        visibility = kwargs.get("visibility"),
        **compile_kwargs
    )
    native.cc_library(
        name = name,
        deps = [":" + name + "_pallasc"],
        **kwargs
    )
