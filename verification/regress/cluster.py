"""The regression's tests as tasks on Dask distributed.

Each test is one task (run_test); inside it the simulation runs in a
process of its own (testrun.simulate), never in the worker's process.  The
simulators reach the workers as content-addressed packages
(sim_package.py).

A worker that dies (killed, out of memory, machine lost) fails its tasks
with KilledWorker: the local scheduler gets no retries of its own
(SCHEDULER_CONFIG), because it would count a death against a test that was
only waiting on that worker, never started.  run_tests counts the attempts
that really started (the workers' events) instead: a test gets ATTEMPTS of
them; one that died at all of them is reported as lost, a failure, in every
report.  No test is ever missing.

A test's folder is written where the scheduler wrote OUT_MARKER (a shared
filesystem); a worker that does not see it runs the test in its own
folder and sends the files back with the result."""

import contextlib
import os
import secrets
from pathlib import Path

import dask
from distributed import Client, KilledWorker, LocalCluster, as_completed, get_worker

from tensorsoc.verification.regress import plan as P
from tensorsoc.verification.regress import testrun
from tensorsoc.verification.regress.sim_package import SimPackage, SimulatorPlugin, describe, locate

EVENTS = "tsoc-regress"          # the topic of the workers' events (Worker.log_event)
OUT_MARKER = ".tsoc-regress-out"
ATTEMPTS = 2                     # a test whose worker died is run once more
MAX_SUBMISSIONS = 5              # a test waiting on workers that keep dying is lost too
# The scheduler's settings: a worker's death fails its tasks at once
# (run_tests decides what to run again), and a one-thread worker is sent one
# test at a time.  An external scheduler should have the same (docs).
SCHEDULER_CONFIG = {"distributed.scheduler.allowed-failures": 0,
                    "distributed.scheduler.worker-saturation": 1.0}
KILL_HOOK = "TSOC_REGRESS_KILL_WORKER"


@contextlib.contextmanager
def connect(scheduler=None, workers=1, log=print):
    """A Client of the cluster at ``scheduler``, or of a LocalCluster of
    ``workers`` processes with one thread each on this machine."""
    if scheduler:
        with Client(scheduler) as client:
            client.wait_for_workers(1, timeout=300)
            log(f"[regress] Dask scheduler {scheduler}: {len(client.scheduler_info()['workers'])} worker(s) now")
            yield client
        return
    with dask.config.set(SCHEDULER_CONFIG), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        log(f"[regress] Dask LocalCluster: {workers} worker process(es), one thread each")
        yield client


def kill_hook(n_specs):
    """The fault hook of tests/test_regress_dask.py: KILL_HOOK=K0[,K1...]
    makes the worker running the plan's i-th test kill itself in the middle
    of it (testrun.KILL_AT) at the test's first Ki attempts.  Returns {index: Ki}."""
    kills = [int(k) for k in os.environ.get(KILL_HOOK, "").split(",") if k.strip()]
    return {i: k for i, k in enumerate(kills[:n_specs]) if k}


def _claim_kill(folder, kills):
    """True for the test's first ``kills`` attempts (one marker file each)."""
    for k in range(kills):
        try:
            os.close(os.open(Path(folder) / f".killed-worker-{k}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            continue
    return False


def run_test(key, package, out, out_token, fault=None, kills=0):
    """The task: one test on this worker.  Returns its result record, with
    the test's files when the scheduler's folder is not shared."""
    spec = P.TestSpec.parse(key)
    worker = get_worker()
    pkg = SimPackage(**package)
    folder, how = locate(pkg)
    marker = Path(out) / OUT_MARKER
    shared = marker.is_file() and marker.read_text() == out_token
    test_dir = (Path(out) if shared else Path(worker.local_directory) / "tsoc-regress") / "tests" / spec.name
    worker.log_event(EVENTS, {"run": out_token, "test": spec.name, "worker": worker.address,
                              "simulator": describe(pkg, folder, how)})
    test_dir.mkdir(parents=True, exist_ok=True)
    passed, seconds, log = testrun.simulate(spec, folder, pkg.config, test_dir, fault,
                                            kill_worker=bool(kills) and _claim_kill(test_dir, kills))
    r = testrun.result(spec, test_dir, log, passed, seconds, fault, worker=worker.address, simulator=how)
    if not shared:
        r["files"] = {n: (test_dir / n).read_bytes() for n in testrun.RESULT_FILES if (test_dir / n).exists()}
    return r


class Events:
    """Prints what the workers say: where each found its simulator (once per
    worker and simulator), and each test started again after a worker died.
    Counts the attempts of each test."""

    def __init__(self, run, log):
        self.run, self.log, self.seen, self.attempts = run, log, set(), {}

    def __call__(self, event):
        _, msg = event
        if msg.get("run") != self.run:
            return
        sim = (msg["worker"], msg["simulator"])
        if sim not in self.seen:
            self.seen.add(sim)
            self.log(f"[regress] worker {msg['worker']}: {msg['simulator']}")
        if "test" in msg:
            n = self.attempts[msg["test"]] = self.attempts.get(msg["test"], 0) + 1
            if n > 1:
                self.log(f"[regress] {msg['test']}: attempt {n} on {msg['worker']} (a worker died running it)")


def _lost(spec, out, exc, fault, started):
    test_dir = Path(out) / "tests" / spec.name
    lost = isinstance(exc, KilledWorker)
    why = (f"lost: its worker died at each of its {started} attempt(s) ({exc})" if lost
           else f"error in the task: {type(exc).__name__}: {exc}")
    return testrun.result(spec, test_dir, test_dir / "test.log", False, 0.0, fault, message=why, lost=lost)


def _keep_files(r, out):
    """Writes the files a worker sent back into the scheduler's folder."""
    files = r.pop("files", None)
    if files is None:
        return r
    test_dir = Path(out) / "tests" / r["name"]
    test_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (test_dir / name).write_bytes(data)
    r.update(dir=str(test_dir), log=str(test_dir / "test.log"))
    return r


def run_tests(client, specs, packages, out, fault=None, ship=True, on_result=None, log=print):
    """Runs ``specs`` on ``client``'s cluster; ``packages`` maps msb_first
    to the SimPackage of that build.  Returns the results in plan order."""
    token = secrets.token_hex(8)
    (Path(out) / OUT_MARKER).write_text(token)
    events = Events(token, log)
    client.subscribe_topic(EVENTS, events)
    plugins = [SimulatorPlugin(p, token) for p in {p.key: p for p in packages.values()}.values()] if ship else []
    for plugin in plugins:
        client.register_plugin(plugin, name=plugin.name)
    kills, priority, submissions = kill_hook(len(specs)), P.priorities(specs), {}

    def submit(i):
        s = specs[i]
        n = submissions[s.name] = submissions.get(s.name, 0) + 1
        return client.submit(run_test, s.key, packages[s.msb_first].as_dict(), str(out), token, fault,
                             kills.get(i, 0), key=f"tsoc-regress-{s.name}-{token}-{n}", retries=1, pure=False,
                             priority=priority[i])
    try:
        # Highest priority first: a task goes to a free worker as soon as it
        # is submitted, before the later ones are there to compare with.
        futures = {submit(i): i for i in sorted(range(len(specs)), key=lambda i: -priority[i])}
        results = {}
        pending = as_completed(futures)
        for fut in pending:
            spec = specs[futures[fut]]
            if fut.status == "error":
                exc, started = fut.exception(), _started(client, token).get(spec.name, 0)
                if isinstance(exc, KilledWorker) and started < ATTEMPTS and submissions[spec.name] < MAX_SUBMISSIONS:
                    again = submit(futures[fut])          # its worker died: run it again
                    futures[again] = futures[fut]
                    pending.add(again)
                    continue
                r = _lost(spec, out, exc, fault, started)
            else:
                r = _keep_files(fut.result(), out)
            results[spec.name] = r
            if on_result:
                on_result(r)
    finally:
        for plugin in plugins:
            client.unregister_worker_plugin(plugin.name)
        client.unsubscribe_topic(EVENTS)
    # A worker sends a test's start before its result or its death, so the
    # scheduler's event log has every attempt by now.
    for name, n in _started(client, token).items():
        results[name]["attempts"] = n
    return [results[s.name] for s in specs]


def _started(client, token):
    """How many attempts of each test started, from the scheduler's event log."""
    counts = {}
    for _, msg in client.get_events(EVENTS):
        if msg.get("run") == token and "test" in msg:
            counts[msg["test"]] = counts.get(msg["test"], 0) + 1
    return counts
