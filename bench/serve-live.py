#!/usr/bin/env python3
"""arbor serve's live session page over another agent's session: the time from a line appended
to a Claude Code session (bench/gen-claude.py, SIZE_MB) to the event that carries it on the
page's stream, and the server's CPU time (user+sys, from /proc) per append; N appends, medians.
The time includes the wait for the next look at the source (every 250 ms: 125 ms on average).
Usage: serve-live.py ARBOR SCRATCH SIZE_MB [N]   (ARBOR: a release build; SCRATCH is emptied)"""
import json, os, re, shutil, socket, statistics, subprocess, sys, time, urllib.request

arbor, scratch, size = sys.argv[1], sys.argv[2], sys.argv[3]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 11
shutil.rmtree(scratch, ignore_errors=True)
proj = os.path.join(scratch, "home/.claude/projects/-work-bench")
os.makedirs(proj)
os.makedirs(os.path.join(scratch, "home/agent/sessions"))
tmp = os.path.join(proj, "gen.jsonl")
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gen-claude.py"), tmp, size],
               check=True, stdout=subprocess.DEVNULL)
last_uuid, sid = None, None
with open(tmp) as f:
    for line in f:
        rec = json.loads(line)
        sid = rec.get("sessionId", sid)
        last_uuid = rec.get("uuid", last_uuid)
src = os.path.join(proj, sid + ".jsonl")
os.rename(tmp, src)
env = dict(os.environ, HOME=os.path.join(scratch, "home"), ARBOR_CATALOG=os.path.join(scratch, "catalog.db"))
port = 18000 + os.getpid() % 1000
srv = subprocess.Popen(["nice", "-n", "-20", arbor, "--agent-dir", os.path.join(scratch, "home/agent"), "serve",
                        "--all", "--addr", f"127.0.0.1:{port}"], env=env, stderr=subprocess.PIPE, text=True)
try:
    while "listening" not in srv.stderr.readline():
        pass
    base = f"http://127.0.0.1:{port}"

    def cpu():
        with open(f"/proc/{srv.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    t0, c0 = time.time(), cpu()
    page = urllib.request.urlopen(f"{base}/session/{sid}").read().decode()
    first = (time.time() - t0, cpu() - c0)
    attr = lambda k: re.search(f'data-{k}="([^"]*)"', page).group(1)
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /session/{sid}/events?leaf={attr('after')}&len={attr('len')}&version={attr('version')} "
              f"HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    r = s.makefile("rb")
    while r.readline() not in (b"\r\n", b""):
        pass
    time.sleep(1)  # the stream's first look (it reads the source once)
    walls, cpus = [], []
    parent = last_uuid
    for i in range(n):
        uid = f"bench-live-{i:04d}"
        marker = f"appended line {i} of the bench"
        line = json.dumps({"type": "user", "uuid": uid, "parentUuid": parent, "sessionId": sid, "cwd": "/work/bench",
                           "isSidechain": False, "timestamp": "2026-12-01T00:00:%02d.000Z" % (i % 60),
                           "message": {"role": "user", "content": marker}}) + "\n"
        parent = uid
        t0, c0 = time.time(), cpu()
        with open(src, "a") as f:
            f.write(line)
        while True:
            got = r.readline()
            if not got:
                sys.exit("the stream closed")
            if b"notice" in got:
                sys.exit(f"a notice: {got!r} {r.readline()!r}")
            if marker.encode() in got:
                break
        walls.append(time.time() - t0)
        cpus.append(cpu() - c0)
        time.sleep(0.3)
    mb = os.path.getsize(src) / 1048576
    print(f"load average {os.getloadavg()}")
    print(f"{mb:.1f} MB Claude Code session; first page {first[0]*1000:.0f} ms wall, {first[1]*1000:.0f} ms CPU")
    print(f"append -> event, {n} appends: wall median {statistics.median(walls)*1000:.0f} ms "
          f"(min {min(walls)*1000:.0f}, max {max(walls)*1000:.0f}); server CPU user+sys median "
          f"{statistics.median(cpus)*1000:.0f} ms (min {min(cpus)*1000:.0f}, max {max(cpus)*1000:.0f})")
    r.close()
    s.close()
finally:
    srv.terminate()
    srv.wait()
    shutil.rmtree(scratch, ignore_errors=True)
