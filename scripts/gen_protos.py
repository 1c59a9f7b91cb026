"""Compile protos/ to Python with gRPC stubs and mypy-protobuf type stubs.

`--check` compiles into a scratch directory and fails when the checked-in code differs, so a
`.proto` edit without `make protos` cannot land. Output goes next to each `.proto` file so that
the import path equals the proto package (`mem0mcp.ranker.v1`) with no post-processing.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


def proto_files() -> list[Path]:
    return sorted(PROTO_ROOT.glob("mem0mcp/**/*.proto"))


def generate(out_dir: Path) -> None:
    bin_dir = Path(sys.executable).parent
    include = Path(protoc.__file__).parent / "_proto"
    for proto in proto_files():
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--plugin=protoc-gen-mypy={bin_dir / 'protoc-gen-mypy'}",
            f"--plugin=protoc-gen-mypy_grpc={bin_dir / 'protoc-gen-mypy_grpc'}",
            f"--python_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            f"--mypy_out={out_dir}",
            f"--mypy_grpc_out={out_dir}",
            str(proto.relative_to(PROTO_ROOT)),
        ]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed on {proto}")


def generated_files(base: Path) -> set[Path]:
    return {
        p.relative_to(base)
        for p in base.glob("mem0mcp/**/*")
        if p.is_file() and p.name.endswith(GENERATED_SUFFIXES)
    }


def check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        generate(scratch)
        fresh, current = generated_files(scratch), generated_files(PROTO_ROOT)
        problems = [f"missing: protos/{p}" for p in sorted(fresh - current)]
        problems += [f"stale (no .proto makes it): protos/{p}" for p in sorted(current - fresh)]
        problems += [
            f"differs: protos/{p}"
            for p in sorted(fresh & current)
            if not filecmp.cmp(scratch / p, PROTO_ROOT / p, shallow=False)
        ]
    if problems:
        print("generated code is out of date; run `make protos`:", *problems, sep="\n  ")
        return 1
    print(f"protos: generated code matches {len(proto_files())} .proto files")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when checked-in code drifts")
    if parser.parse_args().check:
        return check()
    for stale in generated_files(PROTO_ROOT):
        (PROTO_ROOT / stale).unlink()
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        for rel in generated_files(Path(tmp)):
            shutil.copyfile(Path(tmp) / rel, PROTO_ROOT / rel)
    print(f"protos: generated {len(proto_files())} .proto files into protos/mem0mcp")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
