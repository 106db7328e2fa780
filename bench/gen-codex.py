#!/usr/bin/env python3
"""Writes a Codex CLI rollout of about SIZE_MB megabytes (deterministic: SEED) in Codex 0.150's
shapes: session_meta, then turns of turn_context, the user's message (response item and its
user_message event), reasoning (summary and encrypted content) with its agent_reasoning event,
function calls (a shell command, a JSON string of arguments) with exec_command_end events and
their outputs (1-12 KB, as the tool printed them), token_count events ending each model call,
the reply's text and its agent_message event, task_started/task_complete; now and then a
custom tool call (apply_patch) and a compaction.
Usage: gen-codex.py OUT.jsonl SIZE_MB [SEED]"""
import json, random, sys, uuid

out, size_mb = sys.argv[1], float(sys.argv[2])
rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
target = int(size_mb * 1024 * 1024)
sid = str(uuid.UUID(int=rnd.getrandbits(128)))
words = ("the a file test build error fix function module return value line path branch tree "
         "session import merge reply tool result output input cache token model").split()
def text(n):
    return " ".join(rnd.choice(words) for _ in range(n))
t = 1_790_000_000_000
def ts():
    global t
    t += rnd.randint(200, 5000)
    ms = t
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (2026, 9, 1 + (ms // 86_400_000) % 28, (ms // 3_600_000) % 24, (ms // 60_000) % 60, (ms // 1000) % 60, ms % 1000)
size = 0
lines = []
def rec(kind, payload):
    global size
    l = json.dumps({"timestamp": ts(), "type": kind, "payload": payload}, separators=(",", ":"))
    lines.append(l)
    size += len(l) + 1
rec("session_meta", {"id": sid, "timestamp": ts(), "cwd": "/work/bench", "originator": "codex_cli_rs",
                     "cli_version": "0.150.0", "source": "cli", "model_provider": "openai",
                     "git": {"commit_hash": "%040x" % rnd.getrandbits(160), "branch": "main"}})
total = [0, 0, 0, 0]
turn = 0
def usage(i, c, o, r):
    total[0] += i; total[1] += c; total[2] += o; total[3] += r
    last = {"input_tokens": i, "cached_input_tokens": c, "output_tokens": o, "reasoning_output_tokens": r, "total_tokens": i + o}
    tot = {"input_tokens": total[0], "cached_input_tokens": total[1], "output_tokens": total[2], "reasoning_output_tokens": total[3], "total_tokens": total[0] + total[2]}
    rec("event_msg", {"type": "token_count", "info": {"total_token_usage": tot, "last_token_usage": last, "model_context_window": 272000}, "rate_limits": None})
while size < target:
    turn += 1
    tid = "turn-%d" % turn
    rec("turn_context", {"cwd": "/work/bench", "approval_policy": "on-request", "sandbox_policy": {"type": "workspace-write"}, "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})
    rec("event_msg", {"type": "task_started", "turn_id": tid, "model_context_window": 272000})
    prompt = text(rnd.randint(5, 60))
    rec("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
    rec("event_msg", {"type": "user_message", "message": prompt, "images": []})
    for _ in range(rnd.randint(1, 4)):
        summ = "**" + text(4) + "**\n\n" + text(rnd.randint(10, 60))
        rec("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": summ}], "content": None,
                              "encrypted_content": "gAAAAA" + "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rnd.randint(300, 1500)))})
        rec("event_msg", {"type": "agent_reasoning", "text": summ})
        call = "call_%016x" % rnd.getrandbits(64)
        if rnd.random() < 0.2:
            patch = "*** Begin Patch\n*** Update File: src/%s.rs\n" % rnd.choice(words) + "\n".join("+" + text(8) for _ in range(rnd.randint(3, 40))) + "\n*** End Patch"
            rec("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call, "name": "apply_patch", "input": patch})
            usage(rnd.randint(1000, 90000), rnd.randint(0, 80000), rnd.randint(20, 900), rnd.randint(0, 500))
            rec("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": "Success. Updated the following files:\nM src/x.rs"})
            continue
        cmd = ["bash", "-lc", "%s %s" % (rnd.choice(["cargo test", "rg", "cat", "ls -la"]), text(3))]
        rec("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": cmd, "workdir": "/work/bench"}), "call_id": call})
        usage(rnd.randint(1000, 90000), rnd.randint(0, 80000), rnd.randint(20, 900), rnd.randint(0, 500))
        output = "\n".join(text(rnd.randint(5, 20)) for _ in range(rnd.randint(10, 120)))
        rec("event_msg", {"type": "exec_command_end", "call_id": call, "stdout": output, "stderr": "", "aggregated_output": output, "exit_code": 0,
                          "duration": {"secs": 1, "nanos": 0}, "formatted_output": output})
        rec("response_item", {"type": "function_call_output", "call_id": call,
                              "output": json.dumps({"output": output, "metadata": {"exit_code": 0, "duration_seconds": 1.2}})})
    reply = text(rnd.randint(10, 200))
    rec("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": reply}]})
    rec("event_msg", {"type": "agent_message", "message": reply})
    usage(rnd.randint(1000, 90000), rnd.randint(0, 80000), rnd.randint(20, 900), rnd.randint(0, 500))
    rec("event_msg", {"type": "task_complete", "turn_id": tid, "last_agent_message": reply[:100]})
    if rnd.random() < 0.03:
        rec("compacted", {"message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summary: " + text(80)}]}]})
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
