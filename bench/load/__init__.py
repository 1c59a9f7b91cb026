"""Load and faults: do concurrent agents and helper outages leave the store right? (issue 9)

A benchmark, not a test: on the real stack (mem0-local on pgvector in a throwaway database,
the ranker on SQLite, the judge on the fake LLM, the bridge as a subprocess on streamable
HTTP), 16 and 50 official MCP clients run for 60 s each, mixing adds of new facts,
restatements (other wordings, same value), changes of a fact's value, changes back, searches,
and now and then two clients adding two wordings of one fact at the same moment. A third of
changes, changes back and restatements are worded as agents word them ("X moved to N", "X is
back on N", "N is used by X"), not as a variant of the original sentence. Once without
faults, and once each with the judge process, the judge's LLM and the ranker down for 10 s
from 20 s in (SIGKILL, then restarted on the same port; the LLM answers HTTP 500).

Afterwards the store is read straight from mem0-local, with each memory's metadata, once it
stops changing (a bridge that reconciles in the background gets up to 60 s); every
acknowledged fact is asked about through the bridge once more; and it is all checked against
what the clients were told (`bench.load.checker`, by the lifetime contract of issue 23: old
values are kept, marked superseded): exactly one current memory per fact (no duplicate), no
acknowledged fact lost, the current memory holding the value of the last acknowledged add
(not stale), no search after the run answering an older value first, every acknowledged
value still readable (a memory or an acked id's history holds it). Exit status 1 when any run
fails that, so the script doubles as a gate.

    python -m bench.load                       # every fault at 16 and 50 clients (~12 min)
    python -m bench.load --fault judge --clients 16 --seconds 60
    make bench-load

Prints progress on stderr and a table on stdout; writes bench/results/<output>.json (one entry
per run: the check's counts with examples of each violation, tool calls and errors with
samples, notes the bridge returned, successful calls per second, per-tool p50/p95 latency)
and a PNG.
"""
