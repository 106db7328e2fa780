#!/usr/bin/env python3
"""Team mode (`arbor serve --from`) over a SQLite store of N small pi sessions.

Usage: bench/serve_team.py ARBOR_BINARY SCRATCH_DIR [N=10000] [RUNS=3]

Makes N sessions (7 lines each) in SCRATCH_DIR/a, pushes them with `arbor sync push` into
SCRATCH_DIR/team.db, then RUNS times: starts `nice -n -20 arbor serve --from sqlite:…` with an
empty mirror (the first fill; the last mirror moved aside, removed at the end) and with a filled one (a restart), timing until the
"listening" line, the restart's CPU over 20 s idle (10 refreshes of an unchanged store), and
a start after a reboot (the mirror's `boot` file names another boot: its cursor file is set
aside and every file compared whole with the store's copy).
Prints wall and CPU (user+sys, from /proc) medians and the load average. Remove SCRATCH_DIR
afterwards.
"""
import json, os, random, shutil, statistics, subprocess, sys, time, uuid

B, base = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
tick = os.sysconf("SC_CLK_TCK")

def make():
    d = f"{base}/a/sessions/--work-bench--"
    os.makedirs(d, exist_ok=True)
    random.seed(7)
    for i in range(N):
        sid = str(uuid.UUID(int=random.getrandbits(128)))
        ts = f"2026-10-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00.000Z"
        lines = [{"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": f"/work/bench{i % 20}"}]
        parent = None
        for k in range(3):
            uid = f"{i:04x}{k:02x}u1"[-8:]
            lines.append({"type": "message", "id": uid, "parentId": parent, "timestamp": ts,
                          "message": {"role": "user", "content": f"question {i} {k}", "timestamp": 1790000000000 + i}})
            aid = f"{i:04x}{k:02x}a1"[-8:]
            lines.append({"type": "message", "id": aid, "parentId": uid, "timestamp": ts,
                          "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {i} {k}"}],
                                      "provider": "anthropic", "model": "claude-sonnet-4",
                                      "usage": {"input": 1000, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1200,
                                                "cost": {"input": 0.003, "output": 0.003, "cacheRead": 0, "cacheWrite": 0, "total": 0.006}},
                                      "stopReason": "stop", "timestamp": 1790000000000 + i}})
            parent = aid
        name = f"{d}/{ts.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        with open(name, "w") as f:
            f.write("".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
    env = dict(os.environ, PI_CODING_AGENT_DIR=f"{base}/a", ARBOR_MACHINE="benchbox", USER="ann",
               ARBOR_CATALOG=f"{base}/ca.db")
    subprocess.run([B, "sync", "push", "--to", f"sqlite:{base}/team.db"], env=env, check=True,
                   stdout=subprocess.DEVNULL)

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick

moved = []

def start(cold):
    if cold and os.path.exists(f"{base}/cache"):
        # Moved aside, removed at the end: on ext4 without a journal, files deleted in the
        # last 30 s make each new file's inode slower to find (`recently_deleted`), which
        # would charge the deletion of the last mirror to this fill.
        moved.append(f"{base}/cache.old{len(moved)}")
        os.rename(f"{base}/cache", moved[-1])
    env = dict(os.environ, XDG_CACHE_HOME=f"{base}/cache", HOME=base, ARBOR_TEAM_REFRESH_MS="2000")
    t0 = time.monotonic()
    p = subprocess.Popen(["nice", "-n", "-20", B, "serve", "--addr", "127.0.0.1:0", "--from", f"sqlite:{base}/team.db"],
                         env=env, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    assert "listening" in line, line
    return p, time.monotonic() - t0, cpu(p.pid)

if not os.path.exists(f"{base}/team.db"):
    make()
res = {"cold": [], "warm": [], "reboot": [], "idle": []}
for _ in range(RUNS):
    for kind in ["cold", "warm", "reboot"]:
        if kind == "reboot":
            team = f"{base}/cache/arbor/team"
            for key in os.listdir(team):
                with open(f"{team}/{key}/boot", "w") as f:
                    f.write("another boot")
        p, t, c = start(kind == "cold")
        res[kind].append((round(t, 3), c))
        if kind == "warm":
            c0 = cpu(p.pid)
            time.sleep(20.5)
            res["idle"].append((cpu(p.pid) - c0) / 10)
        p.terminate()
        p.wait()
for m in moved:
    shutil.rmtree(m, ignore_errors=True)
print("load average", open("/proc/loadavg").read().strip())
for k in ["cold", "warm", "reboot"]:
    print(f"{k}: wall median {statistics.median(x[0] for x in res[k]):.3f} s, "
          f"cpu(user+sys) median {statistics.median(x[1] for x in res[k]):.3f} s, runs {res[k]}")
print(f"idle: cpu per refresh median {statistics.median(res['idle']):.4f} s, runs {res['idle']}")
