"""bin/gantry submit | jobs | cancel | queues | nodes | apply | logs ID: thin clients of Gantry's REST APIs.

Started by bin/lib/cli.sh, which passes the service URLs (GANTRY_<SERVICE>_URL) and the bearer
tokens in the environment: the caller's (GANTRY_CLI_TOKEN), sent on every read and to admission,
and an admin's (GANTRY_CLI_ADMIN_TOKEN), sent on every change to quota, inventory or placement.
Standard library only, so it runs on any Debian python3 without installing anything.

Exit codes: 0 done; 1 a service refused the request (its problem+json is printed) or cannot be
reached (the URL is printed); 2 bad usage or a file that cannot be read.
"""

import argparse
import base64
import datetime
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid

TIMEOUT_SECONDS = float(os.environ.get("GANTRY_HTTP_TIMEOUT", "30"))
JOB_STATES = ["QUEUED", "PLACED", "RUNNING", "SUCCEEDED", "FAILED", "PREEMPTED", "CANCELLED"]
WAITING_STATES = {"QUEUED", "PREEMPTED"}
PAGE_MAX = 500  # the largest page admission and inventory serve


class Exit(Exception):
    """Ends the command: the lines go to stderr, the code is the exit status."""

    def __init__(self, code, *lines):
        super().__init__(lines[0] if lines else "")
        self.code = code
        self.lines = lines


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line and exit 2, as everywhere in bin/gantry."""

    def error(self, message):
        raise Exit(2, f"{self.prog}: {message} (see --help)")


# ---------------------------------------------------------------------------------------------- HTTP

SERVICES = {
    "admission": ("admission-service", "GANTRY_ADMISSION_URL"),
    "quota": ("quota-service", "GANTRY_QUOTA_URL"),
    "inventory": ("node-inventory-service", "GANTRY_NODE_INVENTORY_URL"),
    "placement": ("placement-service", "GANTRY_PLACEMENT_URL"),
}


def base_url(service):
    name, var = SERVICES[service]
    url = os.environ.get(var, "").rstrip("/")
    if not url:
        raise Exit(2, f"gantry: {var} is not set")
    return url


def call(service, method, path, query=None, body=None, content_type=None, headers=None):
    """One request; returns (status, parsed JSON body or None). Non-2xx raises Exit(1) with the problem."""
    name = SERVICES[service][0]
    url = base_url(service) + path
    if query:
        url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Accept", "application/json, application/problem+json")
    if content_type:
        request.add_header("Content-Type", content_type)
    request.add_header("Authorization", "Bearer " + token_for(service, method))
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return response.status, parse_json(response.read())
    except urllib.error.HTTPError as e:  # a reply, but not 2xx
        raise Exit(1, *problem_lines(name, e.code, e.headers.get("Content-Type", ""), e.read()))
    except (urllib.error.URLError, OSError) as e:  # refused, timed out, unknown host
        reason = getattr(e, "reason", None) or e
        reason = getattr(reason, "strerror", None) or reason  # "Connection refused", not "[Errno 111] ..."
        raise Exit(1, f"gantry: cannot reach {name} at {base_url(service)}: {reason}")


def token_for(service, method):
    """The caller's token for admission and for reads; an admin's for what changes the other services."""
    if service == "admission" or method in ("GET", "HEAD"):
        return os.environ.get("GANTRY_CLI_TOKEN", "")
    admin = os.environ.get("GANTRY_CLI_ADMIN_TOKEN", "")
    if not admin:
        raise Exit(2, f"gantry: {method} on {SERVICES[service][0]} needs an admin token: set GANTRY_ADMIN_TOKEN "
                      "(bin/gantry token USER --admin with the key the services trust)")
    return admin


def parse_json(data):
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def problem_lines(service_name, status, content_type, data):
    """An RFC 9457 problem as a line of title and detail, then one line per wrong field."""
    problem = parse_json(data) if "json" in content_type else None
    if not isinstance(problem, dict):
        hint = ""
        if status == 401:
            hint = ": the token was refused (set GANTRY_TOKEN, or GANTRY_JWT_DIR to the key pair the service trusts)"
        elif status == 403:
            hint = ": not allowed for this token"
        text = data.decode("utf-8", "replace").strip().splitlines()
        if not hint and text and len(text[0]) <= 200:
            hint = ": " + text[0]
        return [f"gantry: {service_name} answered {status}{hint}"]
    title = problem.get("title") or f"HTTP {status}"
    detail = problem.get("detail")
    lines = [f"gantry: {service_name} refused it ({problem.get('status', status)} {title})" + (f": {detail}" if detail else "")]
    for error in problem.get("errors") or []:
        lines.append(f"  {error.get('field', '?')}: {error.get('message', '')}")
    if status == 401:
        lines.append("  set GANTRY_TOKEN (and GANTRY_ADMIN_TOKEN), or GANTRY_JWT_DIR to the key pair the services trust")
    return lines


def pages(service, path, query, want):
    """Items of a keyset-paginated list ({items, nextCursor}), until `want` are collected or none are left."""
    items, cursor = [], None
    while True:
        _, page = call(service, "GET", path, query={**query, "cursor": cursor})
        items.extend(page.get("items") or [])
        cursor = page.get("nextCursor")
        if not cursor or (want is not None and len(items) >= want):
            return items


# ---------------------------------------------------------------------------------------------- output

def print_table(headers, rows):
    """Columns padded to their widest cell, two spaces apart; the last column is not padded."""
    cells = [list(headers)] + [["-" if c is None or c == "" else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1] if len(row) > 1 else row[0])


def print_json(value):
    print(json.dumps(value, indent=2))


def number(value):
    """GPU figures: whole numbers without a decimal point, others to one decimal; None is unbounded."""
    if value is None:
        return "-"
    if float(value) == int(value):
        return str(int(value))
    return f"{value:.1f}"


def parse_instant(text):
    if not text:
        return None
    if isinstance(text, (int, float)):  # seconds since the epoch, should a service write them so
        return datetime.datetime.fromtimestamp(text, datetime.timezone.utc)
    # Java writes up to nine fractional digits; Python reads six
    text = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("Z", "+00:00"))
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None


def duration(seconds):
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


# ---------------------------------------------------------------------------------------------- submit

def cmd_submit(argv):
    parser = Parser(prog="gantry submit", description="Submit a job: a JSON job spec or a Volcano batch.volcano.sh/v1alpha1 Job in YAML.")
    parser.add_argument("file", help="the job file (.json, .yaml or .yml; '-' reads standard input)")
    parser.add_argument("--idempotency-key", metavar="K", help="a retry with the same key returns the first job instead of a second one")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the job as the API returns it")
    out.add_argument("-q", "--quiet", action="store_true", help="print only the job id")
    args = parser.parse_args(argv)

    body = read_file(args.file)
    content_type = job_content_type(args.file, body)
    headers = {"Idempotency-Key": args.idempotency_key} if args.idempotency_key else {}
    status, job = call("admission", "POST", "/v1/jobs", body=body, content_type=content_type, headers=headers)
    if args.json:
        print_json(job)
    elif args.quiet:
        print(job["id"])
    elif status == 200:
        print(f"job {job['id']} was already submitted with this idempotency key: {job['state']}")
    else:
        print(f"submitted job {job['id']} ({job['name']}, queue {job['queue']}, {job['totalGpus']} GPUs): {job['state']}")


def read_file(path, prog="gantry submit"):
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise Exit(2, f"{prog}: cannot read {path}: {e.strerror or e}")
    if not data.strip():
        raise Exit(2, f"{prog}: {path} is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Exit(2, f"{prog}: {path} is not a text file (UTF-8)")
    return data


def job_content_type(path, data):
    """JSON for .json (checked here, so a broken file is a usage error), YAML for .yaml/.yml; otherwise by its first character."""
    lower = path.lower()
    if lower.endswith((".yaml", ".yml")):
        return "application/yaml"
    if lower.endswith(".json") or data.lstrip()[:1] in (b"{", b"["):
        try:
            json.loads(data)
        except ValueError as e:
            raise Exit(2, f"gantry submit: {path} is not valid JSON: {e}")
        return "application/json"
    return "application/yaml"


# ---------------------------------------------------------------------------------------------- jobs

def cmd_jobs(argv):
    if argv[:1] == ["cancel"]:
        return cmd_cancel(argv[1:], prog="gantry jobs cancel")
    if argv[:1] == ["history"]:
        return cmd_history(argv[1:])
    if argv[:1] == ["show"]:
        return cmd_show(argv[1:])
    parser = Parser(prog="gantry jobs", description="List jobs, newest first: yours by default. START: when a waiting job is "
                    "expected to start (UTC, as squeue --start; N/A when unknown; 'gantry jobs show ID' says why). NODELIST: the nodes a placed job holds, "
                    "each with its GPU indices (dgx-01[0-3],dgx-02[0,2]); EXIT: the exit code it ended with. 'gantry jobs show ID' "
                    "shows one job with every task's node and GPUs; 'gantry jobs cancel ID' cancels one; "
                    "'gantry jobs history ID' shows what happened to one.")
    parser.add_argument("--all", action="store_true", help="every job this token may see, not only yours")
    parser.add_argument("--team", metavar="T", help="the jobs of team T")
    parser.add_argument("--user", metavar="U", help="the jobs of user U")
    parser.add_argument("--queue", metavar="Q", help="the jobs in queue Q")
    parser.add_argument("--state", metavar="S", type=str.upper, choices=JOB_STATES, help="one state: " + ", ".join(JOB_STATES))
    parser.add_argument("--limit", metavar="N", type=positive_int, default=100, help="at most N jobs (default 100)")
    parser.add_argument("--json", action="store_true", help="print the jobs as the API returns them (a JSON array)")
    args = parser.parse_args(argv)

    user = args.user
    if user is None and not (args.all or args.team):
        user = token_subject()
    query = {"queue": args.queue, "state": args.state, "user": user, "limit": min(PAGE_MAX, args.limit)}
    jobs, cursor = [], None
    # the API has no team filter: pages are read until enough jobs of the team are found
    while len(jobs) < args.limit:
        if args.team:
            query["limit"] = PAGE_MAX
        _, page = call("admission", "GET", "/v1/jobs", query={**query, "cursor": cursor})
        jobs.extend(j for j in page.get("items") or [] if not args.team or j.get("team") == args.team)
        cursor = page.get("nextCursor")
        if not cursor:
            break
    more = len(jobs) > args.limit or cursor is not None
    jobs = jobs[:args.limit]
    if args.json:
        print_json(jobs)
        return
    now = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for j in jobs:
        submitted = parse_instant(j.get("submittedAt"))
        wait = duration((now - submitted).total_seconds()) if submitted and j.get("state") in WAITING_STATES else None
        rows.append([j.get("id"), j.get("name"), j.get("queue"), j.get("owner"), j.get("state"), j.get("totalGpus"), wait,
                     start_cell(j), node_list(j), j.get("exitCode"), first_line(j.get("pendingReason"))])
    print_table(JOBS_COLUMNS, rows)
    if more:
        print(f"(the newest {args.limit} shown; --limit N for more)", file=sys.stderr)


JOBS_COLUMNS = ["ID", "NAME", "QUEUE", "OWNER", "STATE", "GPUS", "WAIT", "START", "NODELIST", "EXIT", "REASON"]


def start_cell(job):
    """A waiting job's expected start to the second in UTC (2026-12-07T10:16:40Z), N/A when placement cannot say;
    nothing for a job that does not wait."""
    if job.get("state") not in WAITING_STATES:
        return None
    at = parse_instant(job.get("estimatedStartAt"))
    return at.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if at else "N/A"


def expected_start(job):
    """'jobs show': the expected start with how far off and why, or why it is unknown."""
    if job.get("state") not in WAITING_STATES:
        return None
    forecast = job.get("startForecast") or {}
    note = forecast.get("note") or "unknown"
    at = parse_instant(job.get("estimatedStartAt"))
    if not at:
        return note
    left = (at - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    return f"{start_cell(job)} ({'in ' + duration(left) if left > 0 else 'now'}; {note})"


def node_list(job):
    """Where a job is or was placed, as admission writes it (node[GPU indices],...); nothing while it waits in line
    (a preempted or requeued job's last placement is history: 'gantry jobs show ID')."""
    placement = job.get("placement") or {}
    if job.get("state") in WAITING_STATES:
        return None
    return placement.get("nodeList") or None


def first_line(text):
    """A reason in one table row: a failed job's reason may end with the last lines of its log ('gantry jobs show ID' has them)."""
    if not text:
        return text
    lines = text.splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "")


def gpu_cell(task):
    """A task's GPU indices, with its share of each when it shares them: '0,1', '3 (500m each)', '-' for none."""
    gpus = ",".join(str(g) for g in task.get("gpus") or [])
    if not gpus:
        return None
    share = task.get("gpuMilli")
    return f"{gpus} ({share}m each)" if share is not None else gpus


def cmd_show(argv, prog="gantry jobs show"):
    parser = Parser(prog=prog, description="One job: its state, attempts, exit code and reason, and where its last placement put "
                    "each task (node and GPU indices).")
    parser.add_argument("id", help="the job id (as 'gantry jobs' shows it)")
    parser.add_argument("--json", action="store_true", help="print the job as the API returns it")
    args = parser.parse_args(argv)
    _, job = call("admission", "GET", "/v1/jobs/" + job_id_argument(args.id, prog))
    if args.json:
        print_json(job)
        return
    print_job(job)


def print_job(job):
    """A job as 'name: value' lines, then its last placement's tasks as a table."""
    placement = job.get("placement")
    held = placement is not None and job.get("state") not in WAITING_STATES
    fields = [
        ("id", job.get("id")), ("name", job.get("name")), ("queue", job.get("queue")), ("team", job.get("team")),
        ("owner", job.get("owner")), ("priority", f"{job.get('priority')} ({job.get('priorityClass') or 'no class'})"),
        ("state", job.get("state")), ("gpus", job.get("totalGpus")), ("submitted", job.get("submittedAt")),
        ("updated", job.get("updatedAt")), ("attempts", job.get("attempts", 0)),
        ("exit code", job.get("exitCode")), ("reason", job.get("pendingReason")),
    ]
    if job.get("state") in WAITING_STATES:
        fields.append(("expected start", expected_start(job)))
        waits_for = (job.get("startForecast") or {}).get("waitsFor") or []
        if waits_for:
            fields.append(("waits for", ", ".join(waits_for)))
    if placement is not None:
        label = "placement" if held else "last placement"
        bound = f", bound {placement['boundAt']}" if placement.get("boundAt") else ""
        fields.append((label, f"attempt {placement.get('attempt')}{bound}: {placement.get('nodeList') or '?'}"))
    width = max(len(k) for k, _ in fields) + 1
    for key, value in fields:
        text = "-" if value is None or value == "" else str(value)
        lines = text.splitlines() or ["-"]
        print(f"{key + ':':<{width}} {lines[0]}")
        for line in lines[1:]:  # a failed job's reason may carry the last lines of its log
            print(" " * (width + 1) + line)
    if placement is not None and placement.get("tasks"):
        print()
        print_table(["TASK", "NODE", "GPUS"], [[t.get("task"), t.get("node"), gpu_cell(t)] for t in placement["tasks"]])


def positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got '{text}'")
    return int(text)


def token_subject():
    """Whose jobs 'mine' means: the token's subject (read, not verified: admission verifies it)."""
    token = os.environ.get("GANTRY_CLI_TOKEN", "")
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return claims.get("sub") or claims["upn"]  # admission takes sub first, as here
    except (IndexError, KeyError, ValueError, TypeError):
        raise Exit(2, "gantry jobs: the token (GANTRY_TOKEN) is not a JWT with a subject; use --all or --user U")


def job_id_argument(text, prog):
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise Exit(2, f"{prog}: '{text}' is not a job id (a UUID)")


def cmd_history(argv, prog="gantry jobs history"):
    parser = Parser(prog=prog, description="What happened to a job, oldest first: submitted, placed, preempted or requeued and why, ended.")
    parser.add_argument("id", help="the job id (as 'gantry jobs' shows it)")
    parser.add_argument("--json", action="store_true", help="print the steps as the API returns them")
    args = parser.parse_args(argv)
    _, steps = call("admission", "GET", "/v1/jobs/" + job_id_argument(args.id, prog) + "/history")
    if args.json:
        print_json(steps)
        return
    print_table(["AT", "STATE", "BY", "REASON"], [[s.get("at"), s.get("state"), s.get("source"), s.get("reason")] for s in steps])


def cmd_cancel(argv, prog="gantry cancel"):
    parser = Parser(prog=prog, description="Cancel a job: it leaves the queue, or its GPUs are freed.")
    parser.add_argument("id", help="the job id (as 'gantry jobs' shows it)")
    parser.add_argument("--json", action="store_true", help="print the job as the API returns it")
    args = parser.parse_args(argv)
    _, job = call("admission", "DELETE", "/v1/jobs/" + job_id_argument(args.id, prog))
    if args.json:
        print_json(job)
    else:
        print(f"job {job['id']} ({job['name']}): {job['state']}")


# ---------------------------------------------------------------------------------------------- logs

LOG_READ_BYTES = 256 * 1024  # the most admission returns of one task per request
ENDED_STATES = {"SUCCEEDED", "FAILED", "CANCELLED"}


class LogPrinter:
    """Prints tasks' output: as it is for one task; each line after '[task] ' when there are several."""

    def __init__(self, prefixed):
        self.prefixed = prefixed
        self.partial = {}

    def text(self, task, text):
        if not text:
            return
        if not self.prefixed:
            sys.stdout.write(text)
        else:
            lines = (self.partial.pop(task, "") + text).split("\n")
            if lines[-1]:
                self.partial[task] = lines[-1]
            for line in lines[:-1]:
                sys.stdout.write(f"[{task}] {line}\n")
        sys.stdout.flush()

    def flush(self):
        for task, rest in sorted(self.partial.items()):
            sys.stdout.write(f"[{task}] {rest}\n")
        self.partial.clear()
        sys.stdout.flush()


def cmd_logs(argv, prog="gantry logs"):
    parser = Parser(prog=prog, description="A job's tasks' output, as node agents ran them (the latest attempt unless --attempt).")
    parser.add_argument("id", help="the job id (as 'gantry jobs' shows it)")
    parser.add_argument("--task", help="one task only, e.g. worker-0 (default: every task, each line after [task])")
    parser.add_argument("--attempt", type=int, help="an earlier attempt (a job placed again after a requeue has a new one)")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new output until the job has ended")
    parser.add_argument("--interval", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    job_id = job_id_argument(args.id, prog)
    path = "/v1/jobs/" + job_id + "/logs"

    def read(task, offset, attempt, limit=LOG_READ_BYTES):
        _, log = call("admission", "GET", path, query={"task": task, "offset": offset if task else None,
                                                       "attempt": attempt, "limit": limit})
        return log

    printer = None
    offsets = {}
    attempt = args.attempt

    def drain(tasks):
        """Everything new of each task, page after page."""
        for t in tasks:
            name = t["task"]
            if args.task and name != args.task:
                continue
            offset = offsets.get(name, 0)
            end = t.get("end", 0)
            while offset < end:
                page = read(name, offset, attempt)
                if not page.get("tasks"):
                    break
                got = page["tasks"][0]
                printer.text(name, got.get("text", ""))
                if got["next"] <= offset:
                    break  # the rest ends inside a character: it comes once complete
                offset, end = got["next"], got["end"]
            offsets[name] = offset

    while True:
        # the job's state before the read: output read after the job ended is all there is
        ended = call("admission", "GET", "/v1/jobs/" + job_id)[1].get("state") in ENDED_STATES if args.follow else True
        latest = read(args.task, 0, args.attempt, limit=1)  # which attempt and tasks (1 byte each: cheap)
        if latest.get("attempt") is not None and latest["attempt"] != attempt:
            if attempt is not None and printer is not None:
                printer.flush()
                print(f"--- attempt {latest['attempt']} (the job was placed again) ---", flush=True)
            attempt = latest["attempt"]
            offsets.clear()
        tasks = latest.get("tasks", [])
        if printer is None:
            printer = LogPrinter(prefixed=not args.task and (len(tasks) > 1 or args.follow))
        if args.task and not args.follow and not tasks:
            raise Exit(1, f"{prog}: job {job_id} has no output of task {args.task}"
                          + (f" in attempt {attempt}" if attempt else ""))
        drain(tasks)
        if ended:
            break
        import time
        time.sleep(args.interval)
    printer.flush()
    if attempt is None and not args.follow:
        print(f"{prog}: job {job_id} has no output (yet): its tasks have not run on a node agent", file=sys.stderr)


# ---------------------------------------------------------------------------------------------- queues

def cmd_queues(argv):
    parser = Parser(prog="gantry queues", description="Queues with their GPU guarantee, capability, fair share, allocation and demand.")
    parser.add_argument("--json", action="store_true",
                        help="print each queue as GET /v1/queues returns it, with its GET /v1/queues/{name}/status as 'status'")
    args = parser.parse_args(argv)
    _, queues = call("quota", "GET", "/v1/queues")
    for q in queues:
        try:
            _, q["status"] = call("quota", "GET", "/v1/queues/" + urllib.parse.quote(q["name"], safe="") + "/status")
        except Exit as e:
            if e.lines and "cannot reach" in e.lines[0]:
                raise
            q["status"] = None  # e.g. deleted meanwhile: the row shows '?'
    queues = tree_order(queues)
    if args.json:
        print_json(queues)
        return

    def gpus(q, figure):
        status = q.get("status")
        if status is None:
            return "?"
        return number((status.get(figure) or {}).get("gpus"))

    rows = [[q["name"], q.get("parent"), q.get("weight"), q.get("state"),
             number((q.get("guarantee") or {}).get("gpus") or 0), number((q.get("capability") or {}).get("gpus")),
             gpus(q, "deserved"), gpus(q, "allocated"), gpus(q, "pending")] for q in queues]
    print_table(["NAME", "PARENT", "WEIGHT", "STATE", "GUARANTEE", "CAPABILITY", "DESERVED", "ALLOCATED", "PENDING"], rows)


def tree_order(queues):
    """Parents before their children, siblings by name, so the table reads as the tree."""
    by_parent = {}
    names = {q["name"] for q in queues}
    for q in sorted(queues, key=lambda q: q["name"]):
        parent = q.get("parent") if q.get("parent") in names else None
        by_parent.setdefault(parent, []).append(q)
    ordered, stack = [], list(reversed(by_parent.get(None, [])))
    while stack:
        q = stack.pop()
        ordered.append(q)
        stack.extend(reversed(by_parent.get(q["name"], [])))
    return ordered + [q for q in queues if q not in ordered]  # a cycle cannot happen; never drop a queue anyway


# ---------------------------------------------------------------------------------------------- nodes

def cmd_nodes(argv):
    parser = Parser(prog="gantry nodes", description="Nodes of the inventory, with the GPUs placement has not allocated.")
    parser.add_argument("--model", metavar="M", help="only nodes with GPU model M")
    parser.add_argument("--leaf", metavar="L", help="only nodes under leaf switch L")
    parser.add_argument("--json", action="store_true", help="print the nodes as GET /v1/nodes returns them (a JSON array)")
    args = parser.parse_args(argv)
    nodes = pages("inventory", "/v1/nodes", {"model": args.model, "leaf": args.leaf, "limit": PAGE_MAX}, None)
    if args.json:
        print_json(nodes)
        return
    used = allocated_gpus()
    quarantined = quarantined_nodes()
    rows = []
    for n in nodes:
        mig_devices = (n.get("mig") or {}).get("devices") or []
        # a GPU in MIG mode is given out as its MIG devices only: never free whole
        taken = set(used.get(n["name"], ())) | {d.get("gpu") for d in mig_devices} if used is not None else None
        free = "?" if taken is None else max(0, n.get("gpus", 0) - len(taken))
        state = node_state(n) + (",QUARANTINED" if n["name"] in quarantined else "")
        source = (n.get("source") or "?").lower() + (",simulated" if n.get("simulated") else "")
        rows.append([n["name"], n.get("gpuModel"), n.get("gpus"), free, (n.get("topology") or {}).get("leaf"), state, source,
                     mig_column(n.get("mig"))])
    print_table(["NAME", "MODEL", "GPUS", "FREE", "LEAF", "STATE", "SOURCE", "MIG"], rows)
    for name, reason in sorted(quarantined.items()):
        print(f"{name}: quarantined by placement: {reason}", file=sys.stderr)


def mig_column(mig):
    """MIG devices per profile, biggest first: '2x3g.40gb,7x1g.10gb'; '-' without MIG."""
    profiles = (mig or {}).get("profiles") or {}
    if not profiles:
        return "-"
    def slices(p):
        try:
            return int(p.split("g.")[0].split(".")[-1])
        except ValueError:
            return 0
    return ",".join(f"{n}x{p}" for p, n in sorted(profiles.items(), key=lambda e: (-slices(e[0]), e[0])) if n)


def allocated_gpus():
    """node -> GPU indices in use, from placement; None (FREE shows '?') when placement cannot tell."""
    try:
        _, allocations = call("placement", "GET", "/v1/allocations")
    except Exit as e:
        print(e.lines[0] + " (FREE unknown)", file=sys.stderr)
        return None
    used = {}
    for a in allocations or []:
        used.setdefault(a.get("node"), set()).update(a.get("gpus") or [])
    return used


def quarantined_nodes():
    """node -> why placement left it out of scheduling (its state is inconsistent); empty when placement cannot tell."""
    try:
        _, entries = call("placement", "GET", "/v1/quarantined-nodes")
    except Exit:
        return {}
    return {e.get("node"): e.get("reason") for e in entries or []}


def node_state(n):
    state = n.get("health") or "UNKNOWN"
    if n.get("cordoned"):
        state += ",CORDONED"
    elif not n.get("schedulable", True):
        state += ",UNSCHEDULABLE"
    return state


# ---------------------------------------------------------------------------------------------- main

# --------------------------------------------------------------------------------------------- apply

def cmd_apply(argv):
    parser = Parser(prog="gantry apply", description="Import queues and priority classes: multi-document YAML of Volcano "
                    "scheduling.volcano.sh/v1beta1 Queue and Kubernetes scheduling.k8s.io/v1 PriorityClass (quota's "
                    "POST /v1/import, all or nothing, with an admin token).")
    parser.add_argument("file", help="the YAML file ('-' reads standard input)")
    args = parser.parse_args(argv)
    body = read_file(args.file, "gantry apply")
    if body.lstrip()[:1] in (b"{", b"["):
        raise Exit(2, f"gantry apply: {args.file} is JSON; apply takes the YAML of Volcano Queues and PriorityClasses")
    _, result = call("quota", "POST", "/v1/import", body=body, content_type="application/yaml")
    result = result or {}
    for name in result.get("queues", []):
        print(f"queue {name}: applied")
    for name in result.get("priorityClasses", []):
        print(f"priority class {name}: applied")
    for warning in result.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)


COMMANDS = {"submit": cmd_submit, "jobs": cmd_jobs, "cancel": cmd_cancel, "queues": cmd_queues, "nodes": cmd_nodes,
            "apply": cmd_apply, "logs": cmd_logs}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        raise Exit(2, f"gantry: unknown client command '{argv[0] if argv else ''}' (one of: {', '.join(COMMANDS)})")
    COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
        sys.stdout.flush()
    except Exit as e:
        sys.stdout.flush()
        for line in e.lines:
            print(line, file=sys.stderr)
        sys.exit(e.code)
    except BrokenPipeError:  # `gantry jobs | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
