#!/usr/bin/env python3
"""Writes the committed seed corpora under fuzz/seeds/<target>/ (docs/FUZZING.md).

The streams are the shapes the test kit's scripted servers and the benchmarks' recordings send
(crates/yui-testkit/src/sse.rs, crates/yui-core/benches/turn_stream.rs, push_stream.rs): what
llama.cpp / vLLM / OpenAI-style servers send. Card seeds are the CLI's fixtures. Rerun after a
wire change: `python3 fuzz/make_seeds.py`.
"""
import json, os, shutil, pathlib

ROOT = pathlib.Path(__file__).resolve().parent
REPO = ROOT.parent
OUT = ROOT / "seeds"
J = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def put(target, name, data, cut=0):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    if target in ("chat_replay", "responses_replay"):
        data = bytes([cut]) + data  # the replay targets' first byte: network chunk size
    (d / name).write_bytes(data)


# --- Chat Completions ---
def chunk(delta, fr=None, **extra):
    v = {"id": "chatcmpl-8f3a", "object": "chat.completion.chunk", "created": 1764496800,
         "model": "qwen2.5-7b-instruct", "system_fingerprint": "b4500-fp",
         "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": fr}]}
    v.update(extra)
    return f"data: {J(v)}\n\n"

def c_call(i, cid, name, args):
    return chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                  "function": {"name": name, "arguments": args}}]})

def c_args(i, frag):
    return chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]})

timings = {"usage": {"prompt_tokens": 812, "completion_tokens": 9, "total_tokens": 821},
           "timings": {"prompt_n": 812, "predicted_n": 9, "predicted_ms": 166.5}}
DONE = "data: [DONE]\n\n"
words = ["Well", ",", " I", " think", " that", "'s", " a", " lovely", " idea", "."]
say = chunk({"role": "assistant", "content": None}) + "".join(chunk({"content": w}) for w in words)
put("chat_replay", "say", say + chunk({}, "stop", **timings) + DONE)
put("chat_replay", "say_cut7", say + chunk({}, "stop") + DONE, cut=7)
express = (say + c_call(0, "call_1", "generate_express", "")
           + c_args(0, '{"emotion_id":"happy",') + c_args(0, '"motion_id":"nod"}')
           + chunk({}, "tool_calls", **timings) + DONE)
put("chat_replay", "express_call", express)
put("chat_replay", "express_call_cut1", express, cut=1)
calls = [("generate_express", '{"emotion_id":"shy","emotion_text":"blushes","caption":"eh"}'),
         ("body_action", '{"action":"move_to","spot":"center","monitor":1}'),
         ("look", '{"at":"screen","monitor":2}'),
         ("browser", '{"code":"return document.title"}'),
         ("rate_relation", '{"toward":"user","delta":1,"why":"kind words"}'),
         ("address_character", '{"to":"Ren"}')]
every = chunk({"role": "assistant", "content": "Hi "})
for i, (n, a) in enumerate(calls):
    every += c_call(i, f"call_{i}", n, a)
put("chat_replay", "every_tool", every + chunk({}, "tool_calls") + DONE)
put("chat_replay", "error_midstream", say + 'data: {"error":{"message":"boom","type":"server_error"}}\n\n')
put("chat_replay", "crlf_comments", (": keep-alive\r\n\r\n" + say.replace("\n", "\r\n")
                                       + "event: error\r\ndata: {\"error\":{\"message\":\"x\"}}\r\n\r\n"))
put("chat_replay", "unicode_split", chunk({"content": "こんにちは 🌸 café"}) + chunk({}, "length") + DONE, cut=3)
put("chat_replay", "bad_json_line", say + "data: {\"choices\":[{\"delta\":{\"content\n\n" + DONE)
put("chat_replay", "reasoning", chunk({"reasoning_content": "hmm"}) + chunk({"content": "ok"})
    + f"data: {J({'hermes.tool.progress': {'tool': 'x'}})}\n\n" + chunk({}, "stop") + DONE)

# --- Responses ---
def ev(v):
    return f"event: {v['type']}\ndata: {J(v)}\n\n"

created = ev({"type": "response.created", "sequence_number": 0,
              "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}})
text = "".join(ev({"type": "response.output_text.delta", "sequence_number": i + 1, "item_id": "msg_1",
                   "output_index": 0, "content_index": 0, "delta": w, "logprobs": []})
               for i, w in enumerate(words))
completed = ev({"type": "response.completed", "sequence_number": 99,
                "response": {"id": "resp_1", "object": "response", "status": "completed",
                             "usage": {"input_tokens": 812, "output_tokens": 9}}})

def r_call(oi, item, cid, name, args):
    return (ev({"type": "response.output_item.added", "output_index": oi,
                "item": {"type": "function_call", "id": item, "call_id": cid, "name": name,
                         "arguments": "", "status": "in_progress"}})
            + ev({"type": "response.function_call_arguments.delta", "item_id": item,
                  "output_index": oi, "delta": args})
            + ev({"type": "response.function_call_arguments.done", "item_id": item,
                  "output_index": oi, "arguments": args})
            + ev({"type": "response.output_item.done", "output_index": oi,
                  "item": {"type": "function_call", "id": item, "call_id": cid, "name": name,
                           "arguments": args, "status": "completed"}}))

put("responses_replay", "say", created + text + completed)
put("responses_replay", "say_cut5", created + text + completed, cut=5)
put("responses_replay", "express_call", created + text + r_call(1, "fc_1", "call_1", "generate_express",
                                                                '{"emotion_id":"happy","motion_id":"nod"}') + completed)
every = created
for i, (n, a) in enumerate(calls):
    every += r_call(i + 1, f"fc_{i}", f"call_{i}", n, a)
put("responses_replay", "every_tool", every + completed)
put("responses_replay", "every_tool_cut2", every + completed, cut=2)
put("responses_replay", "failed", created + text + ev({"type": "response.failed", "response": {
    "id": "resp_1", "status": "failed", "error": {"code": "server_error", "message": "boom"}}}))
put("responses_replay", "incomplete", created + text + ev({"type": "response.incomplete", "response": {
    "id": "resp_1", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}))
put("responses_replay", "in_progress_unknown", created + ev({"type": "response.in_progress", "response": {}})
    + ev({"type": "response.reasoning_summary_text.delta", "delta": "x"}) + text + completed)
put("responses_replay", "error_event", created + 'event: error\ndata: {"type":"error","code":"rate_limit","message":"slow down"}\n\n')

# --- Push frames (one per line) ---
T = "t-1"
frames = [{"type": "welcome", "protocol": 1},
          {"type": "segment", "turn_id": T, "kind": "speech", "text": "Hello there, ",
           "cues": [{"at": 2, "emotion_id": "happy"}, {"at": 6, "motion_id": "nod", "caption": "hi"}]},
          {"type": "segment", "turn_id": T, "kind": "render", "text": "*waves*", "cues": []},
          {"type": "tool_call", "turn_id": T, "call_id": "c1", "name": "generate_express",
           "arguments": {"emotion_id": "shy", "emotion_text": "blushes"}},
          {"type": "tool_call", "turn_id": T, "call_id": "c2", "name": "rate_relation",
           "arguments": '{"toward":"user","delta":2,"why":"a gift"}'},
          {"type": "tool_call", "turn_id": T, "call_id": "c3", "name": "address_character",
           "arguments": {"to": "Ren"}},
          {"type": "tool_status", "turn_id": T, "name": "search", "status": "running search…"},
          {"type": "ping"},
          {"type": "turn_end", "turn_id": T, "status": "ok"}]
put("push_frames", "turn", "\n".join(J(f) for f in frames))
put("push_frames", "error_end", "\n".join(J(f) for f in [
    frames[0], frames[1], {"type": "error", "message": "model crashed"},
    {"type": "turn_end", "turn_id": T, "status": "error", "error": "model crashed"}]))
put("push_frames", "unknown_and_bad", "\n".join([J({"type": "future_frame", "x": 1}), "{not json",
                                                  J({"type": "segment", "turn_id": T, "text": "ü" * 5,
                                                     "cues": [{"at": 99, "emotion_id": "sad"}]})]))
for i, (n, a) in enumerate(calls):
    put("push_frames", f"call_{n}", J({"type": "tool_call", "turn_id": T, "call_id": f"c{i}", "name": n,
                                      "arguments": json.loads(a)}))

# --- Realtime (GA names, beta aliases; crates/yui-testkit/src/realtime.rs) ---
def rt_call(cid, name, args):
    item = f"fc_{cid}"
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": item, "type": "function_call", "status": "in_progress", "call_id": cid, "name": name, "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "item_id": item, "call_id": cid, "delta": args},
        {"type": "response.function_call_arguments.done", "item_id": item, "call_id": cid, "name": name, "arguments": args},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": item, "type": "function_call", "status": "completed", "call_id": cid, "name": name, "arguments": args}},
    ]
RT = [{"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
      {"type": "response.output_audio_transcript.delta", "item_id": "msg_1", "delta": "Hi "}]
RT += rt_call("c1", "generate_express", J({"emotion_id": "happy"}))
RT += [{"type": "response.output_audio.delta", "item_id": "msg_1", "delta": "AAAAAA=="},
       {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "there"}]
RT += rt_call("c2", "rate_relation", J({"toward": "user", "delta": 1, "why": "kind"}))
RT += [{"type": "response.done", "response": {"id": "resp_1", "status": "completed", "output": []}}]
put("realtime_events", "turn", "\n".join(J(e) for e in RT))
put("realtime_events", "beta", "\n".join(J(e) for e in [
    {"type": "conversation.item.created", "item": {}},
    {"type": "response.audio_transcript.delta", "delta": "old"},
    {"type": "response.text.delta", "delta": " names"},
    {"type": "response.audio.delta", "delta": "!!"},
    {"type": "response.done", "response": {"status": "cancelled"}}]))
put("realtime_events", "errors", "\n".join([J({"type": "error", "error": {"message": "bad"}}), "{not json",
    J({"type": "response.done", "response": {"status": "failed", "status_details": {"error": {"message": "x"}}}})]))

# --- Tool arguments (the `arguments` text of a call) ---
args = [a for _, a in calls] + [
    '{"action":"sit_on_window","app":"firefox"}', '{"action":"peek","side":"left"}',
    '{"action":"stand"}', '{"action":"go_to_bed"}', '{"action":"move_to","spot":"corner","monitor":1.0}',
    '{"at":"body"}', '{"at":"perch_targets"}', '{"guide":true}', '{"guide":true,"code":"x"}',
    '{"toward":"Ren","delta":-2,"why":"rude"}', '{"toward":"user","delta":1.0,"why":"  "}',
    '{"toward":"user","delta":3,"why":"x"}', '{"to":"nobody"}', '{"emotion_id":"happy","motion_id":"nod"}',
    '', '{}', 'null', '[1,2]', '"str"']
for i, a in enumerate(args):
    put("tool_args", f"args_{i:02}", a)

# --- Command tool frames: line 1 may be client-tools.json entries, then frames ---
entries = [{"name": "greet", "defaultEnabled": True, "description": "Greets someone.",
            "parameters": {"type": "object", "properties": {"who": {"type": "string", "minLength": 1}},
                           "required": ["who"], "additionalProperties": False},
            "command": "/bin/sh", "args": ["-c", "echo"], "executionTimeoutMs": 5000},
           {"name": "count", "defaultEnabled": False, "description": "Counts.",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10},
                                                            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}},
            "command": "/bin/true"}]
frames = [{"version": 4, "type": "ready", "presentation": {"subject": "Ada"}},
          {"version": 4, "type": "exec", "requestId": "r1", "command": "ls -la",
           "options": {"cwd": "/tmp", "stdin": "aGk=", "maxCaptureBytes": 1024, "timeoutMs": 500}},
          {"version": 4, "type": "exec_cancel", "requestId": "r1"},
          {"version": 4, "type": "result", "ok": True, "content": "hello, Ada"},
          {"version": 4, "type": "result", "ok": False, "error": "no such user",
           "presentation": {"subject": "x", "metadata": {"k": "v"}}}]
put("command_frames", "config_and_frames", "\n".join([J(entries), J({"who": "Ada"}), J({"n": 11, "tags": ["c"]})]
                                                      + [J(f) for f in frames]))
put("command_frames", "frames", "\n".join(J(f) for f in frames))
for p in sorted((REPO / "crates/yui-core/tests/fixtures/command_tools").glob("*")):
    lines = [l for l in p.read_text().splitlines() if '"version"' in l or "version: 4" in l]
    if lines:
        put("command_frames", f"fixture_{p.stem}", "\n".join(lines))

# --- Vocabulary and settings ---
def emo(i, l, d): return {"id": i, "label": l, "description": d}
def mot(i, l, d, **kw): return dict({"id": i, "label": l, "description": d, "reactive": False,
                                     "ambient": False, "broker_publish": True, "trigger": None}, **kw)
vocab = {"emotions": [emo("neutral", "Neutral", "calm"), emo("happy", "Happy", "glad"),
                      emo("shy", "Shy", "bashful"), emo("thinking", "Thinking", "pondering")],
         "motions": [mot("nod", "Nod", "agree"), mot("wave", "Wave", "greet"),
                     mot("stretch", "Stretch", "waking up", broker_publish=False),
                     mot("breathe", "Breathe", "idle", ambient=True),
                     mot("flinch", "Flinch", "poked", reactive=True, trigger="clicked")],
         "voice": {"engine": "speech-dispatcher", "mode": "free", "tags": []},
         "motion_selection": ["nod", "wave"]}
enum_voice = dict(vocab, voice={"engine": "tagged", "mode": "enum",
                                "tags": [{"tag": "[laugh]", "meaning": "laughs"}, {"tag": "[sigh]"}]})
put("vocab_json", "default_like", J(vocab))
put("vocab_json", "enum_voice", J(enum_voice))
put("vocab_json", "no_motions", J({"emotions": vocab["emotions"]}))
put("vocab_json", "duplicate_id", J({"emotions": [emo("a", "A", ""), emo("a", "B", "")]}))
put("vocab_json", "empty", "{}")
settings = {
    "yui.browser": {"enabled": True}, "yui.relations": {"enabled": False}, "yui.screen": {"enabled": True},
    "yui.avatar": {"spots": {"center": {"x": 100, "y": 200, "monitor": 1}}, "bed": {"x": 5, "y": 6}},
    "yui.body": {"state": "sitting", "app": "firefox"},
    "yui.backend": {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen2.5-7b-instruct",
                    "transport": "chat_completions", "push_url": None},
    "yui.vocab": vocab, "yui.voice": {"enabled": True, "engine": "speech-dispatcher"},
    "yui.timeouts": {"connect_secs": 10, "headers_secs": 120, "stall_secs": 60},
    "yui.enabled_client_tools": {"yui": ["greet", "count"]}, "yui.first_run": {"done": True},
    "rate_limit.addressed_chain_max": 7, "no.such.key": {}}
for i, (k, v) in enumerate(settings.items()):
    put("settings_json", f"key_{i:02}", k + "\n" + J(v))

# --- Character cards (the CLI fixtures: a V3 JSON, a PNG card, a broken PNG) ---
fx = REPO / "crates/yui-cli/tests/fixtures"
for f in ("ren.v3.json", "akari.png", "broken.png"):
    put("card_import", f, (fx / f).read_bytes())
put("card_import", "v1.json", J({"name": "Mio", "description": "A cat.", "personality": "curious",
                                 "scenario": "", "first_mes": "Nya.", "mes_example": ""}))
put("card_import", "v2.json", J({"spec": "chara_card_v2", "spec_version": "2.0",
                                 "data": {"name": "Kai", "description": "d", "personality": "p", "scenario": "s",
                                          "first_mes": "hi", "system_prompt": "be kind", "extensions": {}}}))
# --- MCP (mcp.json, a tool list, a call result, SSE bytes) ---
put("mcp_config", "mcp.json", (REPO / "docs/examples/mcp.json").read_bytes())
put("mcp_config", "tools.json", J([{"name": "a.b", "inputSchema": {}},
                                    {"name": "x", "inputSchema": {"type": "string"}}]))
put("mcp_config", "result.json", J({"content": [{"type": "text", "text": "hi"},
                                                {"type": "resource", "resource": {"uri": "u", "text": "t"}}],
                                    "isError": True}))
put("mcp_config", "sse.txt", "data: 1\r\n\r\nevent: x\ndata: 12345678901234567890\n\n: comment\n")
print("seeds written to", OUT)
