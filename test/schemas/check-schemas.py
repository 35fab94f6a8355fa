#!/usr/bin/env python3
"""Checks schemas/*.json against what pallasc reads and writes (ctest: schemas).

  check-schemas.py --pallasc PATH/TO/pallasc [--root SOURCE_DIR] [-j N] [-v]

The documents, found afresh on every run (sorted, so the output is the same
from run to run):

- grid specs (schemas/gridspec.schema.json): examples/*/spec.json, every
  *.json under lit/ that is not a JSON array, the `#--- NAME.json` sections of
  the lit tests (split-file) that are not read by `pallasc build`, and the
  complete specs in the docs' code blocks;
- build lists (schemas/buildlist.schema.json): every *.json under lit/ that is
  a JSON array (or, not being JSON, lies in a `build` folder), the sections
  that `pallasc build` reads, and the complete lists in the docs;
- manifests (schemas/manifest.schema.json): those pallasc writes compiling
  every example for cpu, cuda:sm_90a, rocm:gfx942 and tpu (but the targets
  of EXPECTED_TARGET_REFUSALS, which must refuse the example), the compiles
  of EXTRA_MANIFESTS (eliminated calls, batch loops, vmap, jvp,
  discharge_state) and every lit input pair X.mlir + X.json (no target) that
  compiles; and the complete manifests in the docs;
- probes: specs and build lists made here (spec_probes, list_probes) for the
  schemas' edges no input reaches (every dtype and memory space, every
  compiler param, index maps over several lines, the flags a build list
  entry cannot take, ...);
- name lists: those pallasc's messages give for an unknown memory space,
  dtype, dimension semantics, transform and emit kind, against the schemas'
  (enum_checks), and the enums the manifest schema repeats from the grid
  spec schema (shared_enums).

What pallasc accepts decides what the schema must accept:

- A grid spec is accepted when pallasc's grid spec parser (parseGridSpec)
  takes it: the test compiles it against an empty kernel module, where the
  only error of a spec the parser took is the importer's first one, "no
  pallas.kernel named ... (it defines none)". (Errors that need the kernel --
  an @func index map, an affine expression MLIR cannot parse, the kernel
  signature -- are outside the schema, so such specs must validate too.)
- A build list is run by `pallasc build` in a scratch folder without the
  kernels: a list pallasc takes starts its jobs, which fail on the missing
  kernel; a list it refuses is reported as `LIST.json: error: [i]...` before
  any job. Each entry is also run alone, so that every entry is judged on its
  own, and the whole list for the rules between entries.

Every document (or build list entry) pallasc accepts must validate. Every one
it refuses must be listed in EXPECTED_REJECTIONS below, either as "schema"
(the schema must refuse it too) or with the reason the schema cannot express
(it must then validate: the rule is pallasc's alone). So a schema that drifts
from the code, either way, fails the test, and so does a new invalid input
that nobody has classified.

JSON is read as pallasc reads it: duplicate keys and NaN/Infinity are errors
(JSON Schema sees only the parsed value).

Exit status: 0 when everything agrees, 1 otherwise, 77 (skipped) when the
jsonschema module is not installed (scripts/setup.sh installs it).
"""

import argparse
import concurrent.futures
import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Inputs pallasc refuses on purpose, by origin: "schema" when the schema
# refuses them too, else why it cannot (the rule relates several keys or
# entries, or lies outside the document). A build list entry is
# "ORIGIN[i]"; a rule between entries or of the whole list is "ORIGIN".
EXPECTED_REJECTIONS = {
    # lit/Driver/spec-errors.test
    "lit/Driver/Inputs/bad-truncated.json": "schema",  # not JSON
    "lit/Driver/Inputs/bad-type.json": "schema",
    "lit/Driver/Inputs/bad-unknown-key.json": "schema",
    "lit/Driver/Inputs/bad-block-rank.json":
        "a block_shape has one entry per dimension of its array (two keys)",
    "lit/Driver/Inputs/bad-index-map-arity.json":
        "an affine index map takes one index per grid dimension (two keys)",
    "lit/Driver/Inputs/bad-alias-range.json":
        "alias indices lie in the ranges of inputs and outputs (three keys)",
    "lit/Driver/Inputs/bad-alias-type.json":
        "an aliased input and output have the same shape and dtype (three keys)",
    "lit/Driver/Inputs/bad-pinned.json":
        "a linear input is aliased to an output (two keys)",
    # lit/Transforms/symbolic-driver.test
    "lit/Transforms/symbolic-driver.test#alias-unbatched.json":
        "a vmap batches a symbolic aliased input at axis 0 (three keys)",
    "lit/Transforms/symbolic-driver.test#alias-axis1.json":
        "a vmap batches a symbolic aliased input at axis 0 (three keys)",
    # lit/Transforms/symbolic-vmap-axis-driver.test
    "lit/Transforms/symbolic-vmap-axis-driver.test#unknown.json":
        "a dimension expression uses declared symbols (two keys)",
    "lit/Transforms/symbolic-vmap-axis-driver.test#nonlinear.json":
        "an axis size is linear in the symbols (expression algebra)",
    "lit/Transforms/symbolic-vmap-axis-driver.test#zero.json":
        "an axis size is at least 1 over the symbols' ranges (two keys)",
    "lit/Transforms/symbolic-vmap-axis-driver.test#alias.json":
        "a vmap by a symbolic axis size batches an aliased input at axis 0 "
        "(three keys)",
    # lit/Driver/spec-symbols.test
    "lit/Driver/spec-symbols.test#unknown-symbol.json":
        "a dimension expression uses declared symbols (two keys)",
    "lit/Driver/spec-symbols.test#non-linear.json":
        "an array dimension is linear in the symbols (expression algebra)",
    "lit/Driver/spec-symbols.test#dim-division.json":
        "an array dimension is linear in the symbols (expression algebra)",
    "lit/Driver/spec-symbols.test#undecidable-div.json":
        "a grid entry divides by a positive integer (expression algebra)",
    "lit/Driver/spec-symbols.test#negative.json":
        "a dimension is never negative over the symbols' ranges (two keys)",
    "lit/Driver/spec-symbols.test#unbounded.json":
        "a dimension is never negative over the symbols' ranges (two keys)",
    "lit/Driver/spec-symbols.test#block-too-large.json":
        "a block fits its array at some size the symbols allow (three keys)",
    "lit/Driver/spec-symbols.test#element-window.json":
        "an element window fits its array at the symbols' minimum (three keys)",
    "lit/Driver/spec-symbols.test#whole-array-block.json":
        "a symbolic array's block spec has a static block_shape (two keys)",
    "lit/Driver/spec-symbols.test#alias-needs-equal.json":
        "aliased symbolic shapes are the same expressions (three keys)",
    "lit/Driver/spec-symbols.test#bad-constraint.json":
        "a symbol's min, max and multiple_of admit a value (arithmetic)",
    "lit/Driver/spec-symbols.test#c-keyword.json":
        "a symbol name the generated C entry point can take as a parameter "
        "(C/C++ keywords and the header's own names: a list in the code, as "
        "the dimension-expression functions are)",
    # lit/Transforms/hi-to-lo-driver.test
    "lit/Transforms/hi-to-lo-driver.test#no-parts.json": "schema",
    "lit/Transforms/hi-to-lo-driver.test#bad-part.json": "schema",
    "lit/Transforms/hi-to-lo-driver.test#hi-and-shape.json": "schema",
    "lit/Transforms/hi-to-lo-driver.test#hi-output.json": "schema",
    "lit/Transforms/hi-to-lo-driver.test#hi-alias.json":
        "a hi input is not aliased (two keys)",
    "lit/Transforms/hi-to-lo-driver.test#hi-prefetch.json":
        "a scalar-prefetch input is not a hi aggregate (two keys)",
    # lit/Driver/build-list-errors.test
    "lit/Driver/build-list-errors.test#entries.json[0]": "schema",
    "lit/Driver/build-list-errors.test#entries.json[1]": "schema",
    "lit/Driver/build-list-errors.test#entries.json[2]": "schema",
    "lit/Driver/build-list-errors.test#entries.json[3]": "schema",
    "lit/Driver/build-list-errors.test#entries.json[4]": "schema",
    "lit/Driver/build-list-errors.test#flags.json[0]":
        "flags are parsed as the command line's (--bogus is no flag)",
    "lit/Driver/build-list-errors.test#flags.json[1]": "schema",
    "lit/Driver/build-list-errors.test#flags.json[2]":
        "flags are parsed as the command line's (-O takes 0 to 3)",
    "lit/Driver/build-list-errors.test#flags.json[3]": "schema",
    "lit/Driver/build-list-errors.test#transforms.json[0]": "schema",
    "lit/Driver/build-list-errors.test#transforms.json[1]": "schema",
    "lit/Driver/build-list-errors.test#syntax.json": "schema",  # not JSON
    "lit/Driver/build-list-errors.test#object.json": "schema",
    "lit/Driver/build-list-errors.test#empty.json": "schema",
    "lit/Driver/build-list-errors.test#same.json":
        "no two entries write the same files (between entries)",
    # spec_probes and list_probes
    "probe:unknown-dtype": "schema",
    "probe:any-with-block-shape": "schema",
    "probe:float-integer":
        "JSON Schema's integer takes 4.0; pallasc wants 4 (docs/gridspec.md)",
    "probe:emit-unknown[0]": "schema",
    "probe:flag-joined-output[0]": "schema",
    "probe:flag-with-value[0]": "schema",
    "probe:spec-stdin[0]": "schema",
}

# The targets every example is compiled for, in one compile per example,
# but for the (example, target) pairs of EXPECTED_TARGET_REFUSALS, whose
# compile alone must fail (exit code 1) instead.
MANIFEST_TARGETS = ["cpu", "cuda:sm_90a", "rocm:gfx942", "tpu"]
EXPECTED_TARGET_REFUSALS = {
    ("examples/scalar_prefetch", "tpu"):
        "block [null, 512] of f32 [256, 512]: the last two dims must be "
        "divisible by 8 and 128, or equal the array's",
    ("examples/softmax", "tpu"):
        "block [null, 1024] of f32 [4096, 1000]: the last two dims must be "
        "divisible by 8 and 128, or equal the array's",
}

# Further compiles (kernel, spec, flags; no target), as lit tests make them,
# for the manifest's other shapes.
EXTRA_MANIFESTS = [
    # eliminated (lit/Transforms/dce-driver.test), with an emitted file
    ("examples/add/kernel.mlir", "examples/add/spec.json",
     ["--vmap", "0,0:4", "--used-outputs", "0", "--emit=mlir"]),
    # batch_loop, dynamic grid bounds, scalar prefetch
    # (lit/Driver/launcher-batch.test)
    ("examples/scalar_prefetch/kernel.mlir",
     "lit/Transforms/Inputs/gather-dynamic.json", ["--vmap", "0,0,0:3"]),
    # vmapped_dims (lit/Transforms/vmap-driver.test)
    ("examples/matmul/kernel.mlir", "examples/matmul/spec.json",
     ["--vmap", "0,none:4"]),
    # jvp (lit/Transforms/jvp-examples.test)
    ("examples/softmax/kernel.mlir", "examples/softmax/spec.json", ["--jvp"]),
    # discharge_state after vmap (lit/Transforms/discharge-state-driver.test)
    ("lit/Transforms/Inputs/hist.mlir", "lit/Transforms/Inputs/hist.json",
     ["--vmap", "0:3", "--discharge-state"]),
    # symbols, grid and shape expressions (lit/Driver/symbolic-cpu.test)
    ("lit/Driver/Inputs/symbolic/rmsnorm.mlir",
     "lit/Driver/Inputs/symbolic/rmsnorm.json", ["--target", "cpu"]),
]

SCHEMA_FILES = {
    "gridspec": "gridspec.schema.json",
    "buildlist": "buildlist.schema.json",
    "manifest": "manifest.schema.json",
}

# The importer's first check, the only error a parsed spec gets against an
# empty kernel module.
NO_KERNEL = re.compile(r": error: kernel: no pallas\.kernel named '[^']*' in "
                       r"the kernel module \(it defines none\)$")
# A spec with symbolic shapes that the parser took: without a target
# pallasc refuses it before the importer (docs/gridspec.md#symbols).
SYMBOLIC = re.compile(r": error: [^ ]+: (pallasc cannot compile a spec with|"
                      r"the [a-z_]+ transform does not support) "
                      r"symbolic shapes yet \(symbol '[^']*'\); compile the "
                      r"spec at a static shape$")


class Doc:
    """One document: where it comes from, its kind and text."""

    def __init__(self, origin, kind, text, path=None):
        self.origin = origin  # e.g. lit/Driver/Inputs/mul.json, X.test#a.json
        self.kind = kind  # gridspec, buildlist or manifest
        self.text = text
        self.path = path  # the file, when it is one
        self.value = None  # the parsed JSON
        self.json_error = None  # why it is not JSON as pallasc reads it
        try:
            self.value = load_json(text)
        except ValueError as e:
            self.json_error = str(e)


def load_json(text):
    """json.loads, refusing duplicate keys and NaN/Infinity as pallasc does."""

    def pairs(items):
        obj = {}
        for key, value in items:
            if key in obj:
                raise ValueError("duplicate key %r" % key)
            obj[key] = value
        return obj

    def constant(name):
        raise ValueError("%s is not JSON" % name)

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


# ----------------------------------------------------------------------------
# Finding the documents
# ----------------------------------------------------------------------------


# Probes: documents made here from lit/Driver/Inputs/mul.json (the spec of
# lit/Driver/Inputs/mul.mlir) to try the schemas' edges that no input above
# reaches, judged like the others ("probe:NAME" in EXPECTED_REJECTIONS).
# Each spec probe is (name, change): the keys to set in mul.json (None:
# remove the key); a build list probe is (name, entry fields added to
# {"kernel", "spec", "targets"}). The enums are the schemas' own: every value
# they list must be one pallasc takes (ENUM_CHECKS checks the other way).
def spec_probes(schemas):
    d = schemas["gridspec"]["$defs"]
    tpu = schemas["gridspec"]["properties"]["compiler_params"]["properties"][
        "tpu"]["properties"]
    semantics = tpu["dimension_semantics"]["items"]["enum"]
    gpu = schemas["gridspec"]["properties"]["compiler_params"]["properties"][
        "gpu"]["properties"]
    return [
        ("every-dtype", {"scratch_shapes": [{"shape": [2], "dtype": t}
                                            for t in d["dtype"]["enum"]]}),
        ("unknown-dtype", {"scratch_shapes": [{"shape": [2], "dtype": "f8"}]}),
        ("every-memory-space", {"scratch_shapes": [
            {"shape": [2], "dtype": "f32", "memory_space": m}
            for m in d["memorySpace"]["enum"]]}),
        ("every-dimension-semantics", {
            "grid": [1] * len(semantics), "in_specs": None, "out_specs": None,
            "compiler_params": {"tpu": {"dimension_semantics": semantics}}}),
    ] + [
        ("num-warps-%d" % n, {"compiler_params": {"gpu": {"num_warps": n}}})
        for n in gpu["num_warps"]["enum"]
    ] + [
        ("every-compiler-param", {
            "grid_names": ["i"], "metadata": {"owner": "x"},
            "cost_estimate": {"flops": 1, "bytes_accessed": 2,
                              "transcendentals": 0},
            "compiler_params": {
                "gpu": {"num_warps": 4, "num_stages": 2, "strict_fp": True},
                "tpu": {"dimension_semantics": ["arbitrary"],
                        "vmem_limit_bytes": 1, "has_side_effects": True}}}),
        ("index-map-newlines", {"in_specs": [
            {"block_shape": [8, 128], "index_map": "\n(i)\n->\n(i, 0)"},
            {"block_shape": [8, None], "index_map": "(i\n) -> (i, 0)"}]}),
        ("any-with-block-shape", {"out_specs": [
            {"memory_space": "any", "block_shape": [8, 128]}]}),
        ("any-whole-array", {"out_specs": [{"memory_space": "any"}]}),
        # After jvp the operands are the pass's to count (jvp doubles them).
        ("counts-after-jvp", {"transforms": [
            {"jvp": {}}, {"dce": {"used_outputs": [True] * 4097}},
            {"vmap": {"in_axes": [0] * 4097, "axis_size": 2}}]}),
        ("float-integer", {"grid": [4.0]}),
    ]


def emit_kinds(schemas):
    """The --emit kinds of the build list schema's emit pattern."""
    pattern = schemas["buildlist"]["items"]["properties"]["emit"]["items"][
        "pattern"]
    return re.match(r"\^\(\?:([^)]*)\)", pattern).group(1).split("|")


def list_probes(schemas):
    return [
        ("emit-each", {"emit": emit_kinds(schemas)}),
        ("emit-comma-separated", {"emit": ["header,lib"]}),
        ("emit-unknown", {"emit": ["header,ptx"]}),
        ("flag-joined-output", {"flags": ["-oout"]}),
        ("flag-with-value", {"flags": ["--name=x"]}),
        ("flag-allowed", {"flags": ["-O2", "--vmap", "0,0:2", "-MD"]}),
        ("spec-stdin", {"spec": "-"}),
    ]


def probe_spec(root, change):
    spec = load_json(read(os.path.join(root, "lit", "Driver", "Inputs",
                                       "mul.json")))
    for key, value in change.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    return json.dumps(spec, indent=1)


def probe_list(fields):
    entry = {"kernel": "mul.mlir", "spec": "mul.json", "targets": ["cpu"]}
    entry.update(fields)
    return json.dumps([entry], indent=1)


def probe_documents(root, schemas):
    docs = [Doc("probe:" + name, "gridspec", probe_spec(root, change))
            for name, change in spec_probes(schemas)]
    docs += [Doc("probe:" + name, "buildlist", probe_list(fields))
             for name, fields in list_probes(schemas)]
    return docs


# The lists of names pallasc's messages give for an unknown value, against
# the schemas' (one source per fact: a name added to or dropped from either
# side fails): (what, kind, document with the unknown value "zzzzzzzz", the
# regex of the list in the message, the schema's names, "same" or "subset":
# pallasc's names are all the schema's, which may list more).
def enum_checks(schemas):
    g, b = schemas["gridspec"], schemas["buildlist"]
    tpu = g["properties"]["compiler_params"]["properties"]["tpu"]["properties"]
    return [
        ("memory spaces", "gridspec",
         {"scratch_shapes": [{"shape": [2], "dtype": "f32",
                              "memory_space": "zzzzzzzz"}]},
         r"unknown memory space '\w+'; expected (.*)$",
         g["$defs"]["memorySpace"]["enum"], "same"),
        ("dtypes (the canonical ones)", "gridspec",
         {"scratch_shapes": [{"shape": [2], "dtype": "zzzzzzzz"}]},
         r"expected one of (.*?) \(or a numpy name",
         g["$defs"]["dtype"]["enum"], "subset"),
        ("dimension semantics", "gridspec",
         {"compiler_params": {"tpu": {"dimension_semantics": ["zzzzzzzz"]}}},
         r"dimension_semantics\[0\]: expected (.*), got",
         tpu["dimension_semantics"]["items"]["enum"], "same"),
        ("transforms", "gridspec", {"transforms": [{"zzzzzzzz": {}}]},
         r"unknown transform '\w+'; expected (.*)$",
         [t["required"][0] for t in g["$defs"]["transform"]["oneOf"]], "same"),
        ("build list transforms", "buildlist",
         {"transforms": [{"zzzzzzzz": {}}]},
         r"unknown transform \"\w+\"; expected (.*)$",
         list(b["items"]["properties"]["transforms"]["items"]["properties"]),
         "same"),
        ("build list emit kinds", "buildlist", {"emit": ["zzzzzzzz"]},
         r"not in \{(.*)\}", emit_kinds(schemas), "same"),
    ]


def shared_enums(checker, schemas):
    """The names the manifest schema repeats from the grid spec schema's."""
    g, m = schemas["gridspec"], schemas["manifest"]

    def params(schema, target):
        return schema["properties"]["compiler_params"]["properties"][target][
            "properties"]
    pairs = [
        ("memory spaces", g["$defs"]["memorySpace"]["enum"],
         m["$defs"]["memorySpace"]["enum"]),
        ("num_warps", params(g, "gpu")["num_warps"]["enum"],
         params(m, "gpu")["num_warps"]["enum"]),
        ("dimension semantics",
         params(g, "tpu")["dimension_semantics"]["items"]["enum"],
         params(m, "tpu")["dimension_semantics"]["items"]["enum"]),
    ]
    for what, spec_names, manifest_names in pairs:
        checker.count("name list compared")
        if spec_names != manifest_names:
            checker.fail("%s: the manifest schema's against the gridspec "
                         "schema's" % what,
                         ["%s lists %s, %s lists %s" % (
                             SCHEMA_FILES["gridspec"], spec_names,
                             SCHEMA_FILES["manifest"], manifest_names)])


def names_in(text):
    """'a', 'b' or 'c' / a, b or c / a,b,c: the names."""
    if "'" in text:
        return re.findall(r"'([^']*)'", text)
    return [w for w in re.split(r",\s*|\s+or\s+", text.strip()) if w]


def check_enum(checker, pallasc, root, what, kind, change, regex, names, how):
    work = pallasc.fresh_dir()
    if kind == "gridspec":
        doc = Doc("probe:unknown-name.json", kind, probe_spec(root, change))
        errors = pallasc.spec_errors(doc, work)
    else:
        doc = Doc("probe:unknown-name.json", kind, probe_list(change))
        errors = [l for ls in pallasc.list_errors(doc, doc.text, work).values()
                  for l in ls]
    found = None
    for line in errors:
        m = re.search(regex, line)
        if m:
            found = names_in(m.group(1))

    def judge():
        checker.count("name list compared")
        label = "%s: pallasc's against the %s schema's" % (what, kind)
        if found is None:
            checker.fail(label, ["no message of pallasc matches %r:" % regex]
                         + errors[:5])
            return
        missing = sorted(set(found) - set(names))
        extra = sorted(set(names) - set(found)) if how == "same" else []
        if missing or extra:
            checker.fail(label, ["pallasc names %s, %s lists %s" % (
                found, SCHEMA_FILES[kind], names)] +
                (["not in the schema: %s" % missing] if missing else []) +
                (["not in pallasc: %s" % extra] if extra else []))
        elif checker.verbose:
            print("same    %s" % label)
    return judge


def split_file_sections(text):
    """The `#--- NAME` / `//--- NAME` sections of a split-file test."""
    sections = []
    current = None
    for line in text.splitlines(keepends=True):
        m = re.match(r"^(?:#|//)--- (\S+)\s*$", line)
        if m:
            current = [m.group(1), []]
            sections.append(current)
        elif current is not None:
            current[1].append(line)
    return [(name, "".join(lines)) for name, lines in sections]


def fenced_blocks(text):
    """(line, text) of each ``` code block of a Markdown file."""
    blocks = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            blocks.append((start + 1, "".join(lines[start:j])))
            i = j + 1
        else:
            i += 1
    return blocks


def doc_kind(value):
    """The kind of a complete document in the docs, else None (a fragment)."""
    if isinstance(value, dict):
        return {"pallasc.gridspec/v1": "gridspec",
                "pallasc.manifest/v1": "manifest"}.get(value.get("schema"))
    if (isinstance(value, list) and value and
            all(isinstance(e, dict) and "kernel" in e and "spec" in e
                for e in value)):
        return "buildlist"
    return None


def find_documents(root):
    docs = []
    for path in sorted(glob.glob(os.path.join(root, "examples", "*",
                                              "spec.json"))):
        docs.append(Doc(rel(root, path), "gridspec", read(path), path))

    for path in sorted(glob.glob(os.path.join(root, "lit", "**", "*.json"),
                                 recursive=True)):
        text = read(path)
        doc = Doc(rel(root, path), "gridspec", text, path)
        in_build_folder = "build" in rel(root, path).split("/")[:-1]
        if isinstance(doc.value, list) or (doc.value is None and
                                           in_build_folder):
            doc.kind = "buildlist"
        docs.append(doc)

    for path in sorted(glob.glob(os.path.join(root, "lit", "**", "*.test"),
                                 recursive=True)):
        text = read(path)
        for name, body in split_file_sections(text):
            if not name.endswith(".json"):
                continue
            # Read by `pallasc build` (`%{build} NAME`, `build %t/NAME`)?
            built = re.search(r"build\}?\s+(?:%t/)?" + re.escape(name) +
                              r"\b", text)
            docs.append(Doc(rel(root, path) + "#" + name,
                            "buildlist" if built else "gridspec", body))

    md = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    md += [os.path.join(root, "README.md"),
           os.path.join(root, "examples", "README.md")]
    for path in md:
        if not os.path.exists(path):
            continue
        for line, body in fenced_blocks(read(path)):
            try:
                value = load_json(body)
            except ValueError:
                continue  # a fragment, a command line, a placeholder ("…")
            kind = doc_kind(value)
            if kind:
                docs.append(Doc("%s:%d" % (rel(root, path), line), kind,
                                placeholders(body, kind)))
    return docs


def placeholders(text, kind):
    """The docs write a hash they do not show as "…": a valid SHA-256 stands
    in for it, so that the rest of the example is checked."""
    if kind != "manifest":
        return text
    return re.sub(r'("sha256":\s*)"…"', r'\1"' + "0" * 64 + '"', text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ----------------------------------------------------------------------------
# What pallasc accepts
# ----------------------------------------------------------------------------


def file_name(doc):
    """The file name pallasc reads doc under (its messages start with it)."""
    name = re.split(r"[#:/]", doc.origin)[-1]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return name if name.endswith(".json") else name + ".json"


class Pallasc:
    def __init__(self, exe, root, scratch):
        self.exe = exe
        self.root = root
        self.scratch = scratch
        self.env = dict(os.environ)
        self.env.pop("PALLASC_CACHE_DIR", None)  # never a shared cache
        self.empty_kernel = os.path.join(scratch, "empty.mlir")
        with open(self.empty_kernel, "w") as f:
            f.write("module {}\n")
        self.counter = itertools.count()  # next() is atomic in CPython

    def fresh_dir(self, *parts):
        d = os.path.join(self.scratch, "%04d" % next(self.counter), *parts)
        os.makedirs(d)
        return d

    def run(self, args, cwd=None):
        try:
            p = subprocess.run([self.exe] + args, cwd=cwd, env=self.env,
                               stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=300)
        except subprocess.TimeoutExpired:
            return 124, "", "pallasc %s: timed out after 300 s" % " ".join(args)
        # Messages name the scratch files by their path: drop the folder,
        # which changes from run to run.
        def text(b):
            return b.decode("utf-8", "replace").replace(self.scratch + "/", "")
        return p.returncode, text(p.stdout), text(p.stderr)

    def spec_errors(self, doc, work):
        """pallasc's grid spec parser's errors on doc ([] when it takes it)."""
        path = doc.path
        if path is None:
            path = os.path.join(work, file_name(doc))
            with open(path, "w", encoding="utf-8") as f:
                f.write(doc.text)
        rc, _, err = self.run([self.empty_kernel, "--spec", path, "-o",
                               os.path.join(work, "out")])
        errors = [l for l in err.splitlines() if " error: " in l]
        if rc == 1 and len(errors) == 1 and (NO_KERNEL.search(errors[0]) or
                                             SYMBOLIC.search(errors[0])):
            return []
        return errors or ["exit code %d: %s" % (rc, err.strip()[:200])]

    def list_errors(self, doc, text, work):
        """pallasc build's errors on a build list of `text` (in the scratch
        folder `work`, with the specs it names but not the kernels), by
        entry: {"": [...], "[0]": [...], ...}; {} when it takes the list."""
        # Two folders down, so that "../out" stays inside `work`.
        folder = os.path.join(work, "a", "b")
        os.makedirs(folder, exist_ok=True)
        name = file_name(doc)
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
        self.copy_specs(doc, text, folder)
        _, _, err = self.run(["build", name, "-j", "1", "-q", "-o", "out"],
                             cwd=folder)
        by_entry = {}
        prefix = re.compile(re.escape(name) + r"(?::\d+:\d+)?: error: (.*)$")
        for line in err.splitlines():
            m = prefix.match(line)
            if not m:
                continue  # a job's own failure: the list was taken
            entry = re.match(r"(\[\d+\])", m.group(1))
            by_entry.setdefault(entry.group(1) if entry else "",
                                []).append(line)
        return by_entry

    def copy_specs(self, doc, text, folder):
        """Copies the specs a list names (pallasc reads their names to find
        two entries writing the same files) from where the lit tests take
        them: next to the list, lit/Driver/Inputs or examples."""
        try:
            entries = load_json(text)
        except ValueError:
            return
        if not isinstance(entries, list):
            return
        root = self.root
        search = [os.path.join(root, "lit", "Driver", "Inputs"),
                  os.path.join(root, "examples")]
        if doc.path:
            search.insert(0, os.path.dirname(doc.path))
        for e in entries:
            spec = e.get("spec") if isinstance(e, dict) else None
            if (not isinstance(spec, str) or not spec or
                    os.path.isabs(spec) or ".." in spec.split("/")):
                continue
            for d in search:
                src = os.path.join(d, spec)
                if os.path.isfile(src):
                    dst = os.path.join(folder, spec)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copyfile(src, dst)
                    break


# ----------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------


def json_path(error):
    out = "$"
    for p in error.absolute_path:
        out += "[%d]" % p if isinstance(p, int) else "." + str(p)
    return out


def schema_errors(validator, value):
    errors = sorted(validator.iter_errors(value),
                    key=lambda e: (json_path(e), e.message))
    return ["%s: %s" % (json_path(e), shorten(e.message)) for e in errors]


def entry_schema_errors(validator, value):
    """A build list's schema errors by entry, as list_errors groups pallasc's."""
    by_entry = {}
    for e in validator.iter_errors(value):
        path = list(e.absolute_path)
        key = "[%d]" % path[0] if path and isinstance(path[0], int) else ""
        by_entry.setdefault(key, []).append(
            "%s: %s" % (json_path(e), shorten(e.message)))
    return {k: sorted(v) for k, v in by_entry.items()}


def shorten(s, n=160):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 3] + "..."


class Checker:
    def __init__(self, validators, verbose):
        self.validators = validators
        self.verbose = verbose
        self.failures = []
        self.counts = {}
        self.used_expectations = set()

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def fail(self, origin, lines):
        self.failures.append((origin, lines))

    def judge(self, origin, kind, pallasc_errors, schema_errors):
        """Compares one unit (a document or a build list entry)."""
        expected = EXPECTED_REJECTIONS.get(origin)
        if expected is not None:
            self.used_expectations.add(origin)
        if not pallasc_errors:
            self.count("%s accepted" % kind)
            if schema_errors:
                self.fail(origin, ["pallasc accepts this %s but %s refuses it "
                                   "(the schema is stricter than the code):"
                                   % (kind, SCHEMA_FILES[kind])]
                          + schema_errors[:5])
            elif expected is not None:
                self.fail(origin, ["pallasc accepts this %s, which "
                                   "EXPECTED_REJECTIONS lists: remove it"
                                   % kind])
            elif self.verbose:
                print("ok      %s (%s)" % (origin, kind))
            return
        self.count("%s refused" % kind)
        if expected is None:
            self.fail(origin, ["pallasc refuses this %s, which "
                               "EXPECTED_REJECTIONS does not list: add it, "
                               "as \"schema\" if the schema can refuse it too, "
                               "else with the reason it cannot:" % kind]
                      + pallasc_errors[:5]
                      + ["(the schema says: %s)" % (
                          "; ".join(schema_errors[:3]) or "valid")])
        elif expected == "schema" and not schema_errors:
            self.fail(origin, ["pallasc refuses this %s but %s accepts it "
                               "(the schema is looser than the code here):"
                               % (kind, SCHEMA_FILES[kind])]
                      + pallasc_errors[:5])
        elif expected != "schema" and schema_errors:
            self.fail(origin, ["%s now refuses this %s too: mark it \"schema\" "
                               "in EXPECTED_REJECTIONS (was: %s):"
                               % (SCHEMA_FILES[kind], kind, expected)]
                      + schema_errors[:5])
        elif self.verbose:
            print("refused %s (%s): %s" % (
                origin, kind, "by both" if expected == "schema" else
                "by pallasc only: " + expected))


def check_spec(checker, pallasc, doc):
    work = pallasc.fresh_dir()
    errors = pallasc.spec_errors(doc, work)
    schema = (["not JSON: " + doc.json_error] if doc.json_error else
              schema_errors(checker.validators["gridspec"], doc.value))
    return lambda: checker.judge(doc.origin, "gridspec", errors, schema)


def check_list(checker, pallasc, doc):
    validator = checker.validators["buildlist"]
    whole = pallasc.list_errors(doc, doc.text, pallasc.fresh_dir())
    if doc.json_error or not isinstance(doc.value, list) or not doc.value:
        schema = (["not JSON: " + doc.json_error] if doc.json_error else
                  schema_errors(validator, doc.value))
        flat = [l for ls in whole.values() for l in ls]
        return lambda: checker.judge(doc.origin, "buildlist", flat, schema)
    # Each entry alone, then the rules between them.
    units = []
    by_entry = entry_schema_errors(validator, doc.value)
    for i, entry in enumerate(doc.value):
        alone = pallasc.list_errors(doc, json.dumps([entry]),
                                    pallasc.fresh_dir())
        # Alone, the entry is [0]: name it as in the list.
        flat = [l.replace(": error: [0]", ": error: [%d]" % i, 1)
                for ls in alone.values() for l in ls]
        units.append(("%s[%d]" % (doc.origin, i), flat,
                      by_entry.get("[%d]" % i, [])))
    # The rules between entries (two entries writing the same files), when
    # each entry is valid alone.
    if all(not u[1] for u in units):
        units.append((doc.origin, [l for ls in whole.values() for l in ls],
                      by_entry.get("", [])))

    def judge():
        for origin, p, s in units:
            checker.judge(origin, "buildlist", p, s)
    return judge


def check_manifest_doc(checker, doc):
    """A manifest shown in the docs: it must validate."""
    errors = (["not JSON: " + doc.json_error] if doc.json_error else
              schema_errors(checker.validators["manifest"], doc.value))

    def judge():
        checker.count("manifest in the docs")
        if errors:
            checker.fail(doc.origin, ["this manifest of the docs does not "
                                      "validate against %s (the docs or the "
                                      "schema are out of date):"
                                      % SCHEMA_FILES["manifest"]] + errors[:5])
        elif checker.verbose:
            print("ok      %s (manifest)" % doc.origin)
    return judge


def compile_manifest(checker, pallasc, origin, kernel, spec, targets,
                     flags=(), may_fail=False):
    """Compiles kernel + spec for targets; validates the manifest written.
    When the compile fails: a failure, or with may_fail (a lit pair meant to
    fail) a note."""
    out = pallasc.fresh_dir("out")
    args = [kernel, "--spec", spec, "-o", out] + list(flags)
    for t in targets:
        args += ["--target", t]
    rc, _, err = pallasc.run(args)
    label = "%s (%s)" % (origin, " ".join(["--target " + t for t in targets] +
                                          list(flags)) or "no target")
    if rc != 0:
        first = (err.strip().splitlines() or [""])[0]
        if may_fail and rc == 1:
            def note():
                checker.count("lit pair not compiling")
                if checker.verbose:
                    print("skip    %s: does not compile: %s" % (label, first))
            return note
        return lambda: checker.fail(label, ["pallasc failed (exit code %d):"
                                            % rc] + err.strip().splitlines()[:5])
    found = sorted(glob.glob(os.path.join(out, "*.manifest.json")))
    if len(found) != 1:
        return lambda: checker.fail(label, ["expected one manifest, found %s"
                                            % [os.path.basename(f)
                                               for f in found]])
    try:
        value = load_json(read(found[0]))
        errors = schema_errors(checker.validators["manifest"], value)
    except ValueError as e:
        errors = ["not JSON: %s" % e]

    def judge():
        checker.count("manifest written")
        if errors:
            checker.fail(label, ["pallasc wrote this manifest but %s refuses "
                                 "it:" % SCHEMA_FILES["manifest"]] + errors[:5])
        elif checker.verbose:
            print("ok      %s (manifest)" % label)
    return judge


def expect_refusal(checker, pallasc, origin, kernel, spec, target, reason):
    """The compile of an example for a target that cannot take it."""
    out = pallasc.fresh_dir("out")
    rc, _, err = pallasc.run([kernel, "--spec", spec, "-o", out, "--target",
                              target])
    label = "%s (--target %s)" % (origin, target)

    def judge():
        checker.count("target refusing an example")
        if rc == 0:
            checker.fail(label, ["compiles now: remove it from "
                                 "EXPECTED_TARGET_REFUSALS (was: %s)" % reason])
        elif rc != 1 or " error: " not in err:
            checker.fail(label, ["expected an error (exit code 1), got exit "
                                 "code %d:" % rc] + err.strip().splitlines()[:5])
        elif checker.verbose:
            print("refused %s: %s" % (label, reason))
    return judge


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pallasc", required=True, help="the pallasc to run")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", ".."), help="the source tree")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="pallasc processes at once (default 2)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every document checked")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    try:
        import jsonschema
        from jsonschema import validators
    except ImportError:
        print("schemas: SKIPPED: the Python module jsonschema is not installed "
              "for %s (scripts/setup.sh installs it: Debian's "
              "python3-jsonschema, or pip install jsonschema)"
              % sys.executable)
        return SKIP

    checker_validators, schemas = {}, {}
    for kind, name in SCHEMA_FILES.items():
        schema = load_json(read(os.path.join(root, "schemas", name)))
        schemas[kind] = schema
        cls = validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            print("schemas/%s is not a valid JSON Schema: %s"
                  % (name, shorten(str(e).splitlines()[0])))
            return 1
        checker_validators[kind] = cls(schema)
    checker = Checker(checker_validators, args.verbose)

    pallasc_exe = os.path.abspath(args.pallasc)
    if not os.access(pallasc_exe, os.X_OK):
        print("schemas: %s is not an executable" % pallasc_exe)
        return 1

    docs = find_documents(root) + probe_documents(root, schemas)
    scratch = tempfile.mkdtemp(prefix="pallasc-schemas-")
    try:
        pallasc = Pallasc(pallasc_exe, root, scratch)
        tasks = []
        for doc in docs:
            if doc.kind == "gridspec":
                tasks.append((check_spec, (checker, pallasc, doc)))
            elif doc.kind == "buildlist":
                tasks.append((check_list, (checker, pallasc, doc)))
            else:
                tasks.append((check_manifest_doc, (checker, doc)))
        for check in enum_checks(schemas):
            tasks.append((check_enum, (checker, pallasc, root) + check))
        for spec in sorted(glob.glob(os.path.join(root, "examples", "*",
                                                  "spec.json"))):
            example = rel(root, os.path.dirname(spec))
            kernel = os.path.join(os.path.dirname(spec), "kernel.mlir")
            targets = [t for t in MANIFEST_TARGETS
                       if (example, t) not in EXPECTED_TARGET_REFUSALS]
            tasks.append((compile_manifest,
                          (checker, pallasc, example, kernel, spec, targets)))
            for t in MANIFEST_TARGETS:
                reason = EXPECTED_TARGET_REFUSALS.get((example, t))
                if reason:
                    tasks.append((expect_refusal,
                                  (checker, pallasc, example, kernel, spec, t,
                                   reason)))
        for kernel, spec, flags in EXTRA_MANIFESTS:
            tasks.append((compile_manifest,
                          (checker, pallasc, kernel + " + " + spec,
                           os.path.join(root, kernel), os.path.join(root, spec),
                           [], flags)))
        for spec in sorted(glob.glob(os.path.join(root, "lit", "**", "*.json"),
                                     recursive=True)):
            kernel = spec[:-len(".json")] + ".mlir"
            if os.path.exists(kernel):
                tasks.append((compile_manifest,
                              (checker, pallasc, rel(root, spec[:-5]) +
                               ".{mlir,json}", kernel, spec, [], [], True)))
        # pallasc runs in parallel; the verdicts are given in task order.
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            judges = list(pool.map(lambda t: t[0](*t[1]), tasks))
        for judge in judges:
            if judge:
                judge()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    shared_enums(checker, schemas)
    for origin in sorted(set(EXPECTED_REJECTIONS) - checker.used_expectations):
        checker.fail(origin, ["EXPECTED_REJECTIONS lists this input, which no "
                              "longer exists: remove it"])

    for origin, lines in checker.failures:
        print("FAIL %s" % origin)
        for line in lines:
            print("     %s" % line)
    summary = ", ".join("%d %s" % (n, what)
                        for what, n in sorted(checker.counts.items()))
    print("schemas: %s; %d failure%s" % (summary, len(checker.failures),
                                         "" if len(checker.failures) == 1
                                         else "s"))
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
