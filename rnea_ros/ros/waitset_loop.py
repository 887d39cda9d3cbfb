"""A single-threaded loop that keeps one wait set: what the nodes spin by default.

rclpy's default executor (SingleThreadedExecutor) gathers every entity of every node, builds a new
rcl wait set, waits, and wraps each ready callback in a Task and a coroutine, once per callback.
`WaitSetExecutor` allocates its wait set once and rebuilds its entity tables only when a node's
entity set changes (rclpy calls `Executor.wake()` whenever a node creates or destroys an entity,
and when a node is added); each iteration refills the wait set (rcl clears the entries that were
not ready), waits, and runs what is ready directly: timers, then subscriptions (each message taken
with `handle.take_message`), node guard conditions, clients, services and other waitables. The QoS
event handlers (incompatible QoS/type warnings, two or three per publisher and subscription) are
served from a second wait set polled without waiting every EVENT_POLL_NS: in every wait they would
cost more than the rest.

Streams. A subscription marked with `stream(subscription)` (the node's joint_states, IMU and
odometry, and the trajectory and wrench inputs a cycle may need at once; with them the /clock of
use_sim_time) is waited on in a small third wait set: the streams and the guard conditions, in the
full set's order (/clock, which rclpy's TimeSource subscribes first, before the node's joint_states:
served after it, a state saw the node's time one step old). Only every FULL_WAIT_NS, when a timer is
due (`Timer.time_until_next_call`, read after each full wait), and whenever that small wait ends
without a message, does a wait take in every entity (timers, the other subscriptions, services,
clients, waitables): the middleware's wait costs per entity (a timer adds its own guard condition),
and a wait on all of them every cycle was a large share of the node's cycle (the figures:
docs/performance.md). The price: while a stream flows, a parameter request or a message of another
subscription waits up to FULL_WAIT_NS (plus one stream period) to be served; timers still fire when
due. Its memory is bounded whatever the input rate: nothing is queued in Python, a subscription
holds at most its QoS depth in the middleware. Every callback also runs under the node's error
handler (`_internal_error(where, text)` of the package's nodes, else a logged error), so an
exception in a callback rclpy owns (the parameter services) costs that one call.

API it relies on (tested here with Jazzy's rclpy 7.1, whose own executor makes the same calls;
Humble and Kilted are not tested here; checked at start by `missing_api`, which names what is
missing, and `spin_waitset` then spins rclpy's default executor):
- public: `rclpy.executors.Executor` (subclassed: `add_node`, `wake`, `create_task`, `shutdown`),
  `Node.subscriptions/timers/clients/services/guards/waitables`, `Subscription.msg_type/raw/
  callback/handle/topic_name`, `Timer.callback/handle/time_until_next_call`, `Service.srv_type/
  callback/handle/send_response`, `Client.srv_type/handle/get_pending_request`, `GuardCondition`,
  `rclpy.signals.SignalHandlerGuardCondition`, `Waitable.get_num_entities/add_to_wait_set/
  is_ready/take_data/execute`, `Context.ok/on_shutdown`;
- private (the pybind module `rclpy.impl.implementation_singleton.rclpy_implementation`, which
  rclpy's own executor uses the same way): `WaitSet(n_subscriptions, n_guards, n_timers,
  n_clients, n_services, n_events, context)` and its `clear_entities`, `add_subscription`,
  `add_guard_condition`, `add_timer`, `add_client`, `add_service`, `wait(ns)`,
  `get_ready_entities(kind)`; the handles' `pointer`, `Subscription.take_message(type, raw)`,
  `Timer.is_timer_ready()/call_timer()`, `Service.service_take_request(type)`,
  `Client.take_response(type)`; the subscription's `_callback_type` (Jazzy+: whether the callback
  takes the message info, compared with `Subscription.CallbackType.WithMessageInfo`; absent means
  message only).
Callbacks must be plain functions (a coroutine callback is driven as far as it runs without
waiting); one thread runs everything, like SingleThreadedExecutor.
"""

from __future__ import annotations

import contextlib
import inspect
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import rclpy
from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.guard_condition import GuardCondition
from rclpy.node import Node
from rclpy.subscription import Subscription
from rclpy.utilities import get_default_context

from rnea_ros.ros.signals import join_signal_shutdown, shutdown_is_a_stop

WAIT_SET_METHODS = (
    "clear_entities",
    "add_subscription",
    "add_guard_condition",
    "add_timer",
    "add_client",
    "add_service",
    "wait",
    "get_ready_entities",
)
HANDLE_METHODS = {
    "Subscription": ("take_message", "pointer"),
    "Timer": ("is_timer_ready", "call_timer", "pointer"),
    "Service": ("service_take_request", "pointer"),
    "Client": ("take_response", "pointer"),
    "GuardCondition": ("pointer",),
}
NODE_PROPERTIES = ("subscriptions", "timers", "clients", "services", "guards", "waitables")

ErrorHandler = Callable[[str, str], None]
# QoS event handlers (incompatible QoS/type warnings) are served this often (ns), off the wait.
EVENT_POLL_NS = 100_000_000
# While streams flow, every entity is waited on at least this often (ns); see the module doc.
FULL_WAIT_NS = 20_000_000
_STREAMS: weakref.WeakSet[Any] = weakref.WeakSet()


def stream(subscription: Any) -> Any:
    """Mark a subscription as a sensor stream (see the module doc); returns it."""
    _STREAMS.add(subscription)
    return subscription


_EVENT_HANDLER: Any
try:  # Jazzy and later; Humble's QoSEventHandler waitables are waited on with the rest
    from rclpy.event_handler import EventHandler as _EVENT_HANDLER
except ImportError:  # pragma: no cover - older rclpy
    _EVENT_HANDLER = None


def _implementation() -> Any:
    from rclpy.impl.implementation_singleton import rclpy_implementation

    return rclpy_implementation


def missing_api(implementation: Any = None) -> str | None:
    """What this rclpy lacks of the API the loop relies on (None: nothing)."""
    try:
        impl = _implementation() if implementation is None else implementation
        from rclpy.signals import SignalHandlerGuardCondition  # noqa: F401
    except ImportError as exc:
        return str(exc)
    wait_set = getattr(impl, "WaitSet", None)
    if wait_set is None:
        return "rclpy_implementation.WaitSet"
    for method in WAIT_SET_METHODS:
        if not hasattr(wait_set, method):
            return f"rclpy_implementation.WaitSet.{method}"
    for cls, methods in HANDLE_METHODS.items():
        for method in methods:
            if not hasattr(getattr(impl, cls, None), method):
                return f"rclpy_implementation.{cls}.{method}"
    for prop in NODE_PROPERTIES:
        if not hasattr(Node, prop):
            return f"Node.{prop}"
    if not hasattr(Executor, "wake"):
        return "Executor.wake"
    return None


def _drive(coroutine: Any) -> None:
    """Run a coroutine as far as it goes without waiting on anything (then drop it)."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()


class WaitSetExecutor(Executor):
    """Serves its nodes from one wait set, rebuilt only when their entities change (see module)."""

    # rclpy's Executor.__del__ reads _sigint_gc, which its __init__ sets last: unset when that
    # __init__ failed (a context shut down by a stop during start-up), it printed an AttributeError
    _sigint_gc: Any = None
    _rebuild_gc: Any = None
    _sigint_guard: Any = None

    def __init__(self, *, context: Any = None, on_error: ErrorHandler | None = None) -> None:
        """ExternalShutdownException when `context` is shut down (a stop came first)."""
        from rclpy.signals import SignalHandlerGuardCondition

        with shutdown_is_a_stop(context or get_default_context()):
            super().__init__(context=context)
            self._rebuild_gc = GuardCondition(None, None, context=self._context)  # wake(): rebuild
            self._sigint_guard = SignalHandlerGuardCondition(self._context)  # Ctrl-C ends the wait
        self._impl = _implementation()
        self._on_error = on_error
        self._stale = True
        self._closed = False
        self._wait_set: Any = None
        self._size: tuple[int, ...] = ()
        self._adds: list[tuple[Callable, Any]] = []  # (wait_set.add_x, handle) in add order
        self._stream_wait_set: Any = None  # streams and guard conditions (module doc)
        self._stream_size: tuple[int, ...] = ()
        self._stream_adds: list[tuple[Callable, Any]] = []  # empty: no stream
        self._next_full_wait = 0  # monotonic ns: the first wait after it takes in every entity
        self.streams: list[Any] = []  # the subscriptions in the streams' set
        self.full_waits = 0  # waits on every entity, and on the streams' set (tests, benches)
        self.stream_waits = 0
        self._takes: dict[int, _Take] = {}  # subscription handle pointer → what serves it
        self._timers: dict[int, Any] = {}
        self._guards: dict[int, Any] = {}
        self._clients: dict[int, Any] = {}
        self._services: dict[int, Any] = {}
        self._waitables: list[Any] = []  # waited on with the rest
        self._events: list[Any] = []  # QoS event handlers: polled every EVENT_POLL_NS
        self._event_wait_set: Any = None
        self._event_size: tuple[int, ...] = ()
        self._next_event_poll = 0
        self._tasks_pending: list[Any] = []
        self.rebuilds = 0  # how many times the entity tables were rebuilt (tests, diagnostics)

    # --- Executor API ----------------------------------------------------------------------

    def wake(self) -> None:
        """An entity was created or destroyed, a node added or removed, or the context shut down:
        rebuild the tables before the next wait."""
        self._stale = True
        gc = self._rebuild_gc
        if gc is not None:
            with contextlib.suppress(InvalidHandle):  # after shutdown (a node destroyed later)
                gc.trigger()

    def add_node(self, node: Node) -> bool:
        added = super().add_node(node)
        self.wake()
        return added

    def remove_node(self, node: Node) -> None:
        super().remove_node(node)
        self.wake()

    def create_task(self, callback: Any, *args: Any, **kwargs: Any) -> Any:
        from rclpy.task import Task

        task = Task(callback, args, kwargs, executor=self)
        self._tasks_pending.append(task)
        self._rebuild_gc.trigger()  # ends the wait; the tables stay
        return task

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        self._closed = True
        self._rebuild_gc.trigger()
        done = super().shutdown(timeout_sec)
        # the rcl wait sets go now, while their context is alive: left to the collector they
        # were finalised at interpreter exit after the context, which ended the process with
        # SIGSEGV now and then (seen on Ctrl-C of a launch)
        for wait_set in (self._wait_set, self._event_wait_set, self._stream_wait_set):
            if wait_set is not None:
                with contextlib.suppress(InvalidHandle, ValueError, RuntimeError):
                    wait_set.destroy_when_not_in_use()
        self._wait_set = self._event_wait_set = self._stream_wait_set = None
        for gc in (self._rebuild_gc, self._sigint_guard):
            if gc is not None:
                with contextlib.suppress(InvalidHandle, ValueError):
                    gc.destroy()
        return done

    def spin(self) -> None:
        """Serve until the context is shut down (ExternalShutdownException) or `shutdown()`."""
        with shutdown_is_a_stop(self._context):
            while self._context.ok() and not self._closed:
                self._spin_once(None)

    def spin_once(self, timeout_sec: float | None = None) -> None:
        """Wait up to timeout_sec (None: until something is ready) and run every ready callback;
        ExternalShutdownException once the context is shut down, also when the shutdown came
        while this call built its wait set (rcl refuses a wait set of a shut-down context)."""
        with shutdown_is_a_stop(self._context):
            self._spin_once(timeout_sec)

    def _spin_once(self, timeout_sec: float | None) -> None:
        if self._tasks_pending:
            self._run_tasks()
        if self._stale:
            self._rebuild()
        timeout = -1 if timeout_sec is None or timeout_sec < 0 else int(timeout_sec * 1e9)
        now = time.monotonic_ns()
        if self._events:
            if now >= self._next_event_poll:
                self._poll_events()
                self._next_event_poll = now + EVENT_POLL_NS
            left = self._next_event_poll - now
            timeout = left if timeout < 0 else min(timeout, left)
        full = not self._stream_adds or now >= self._next_full_wait
        if full:
            wait_set = self._wait_set
            wait_set.clear_entities()
            for add, handle in self._adds:
                add(handle)
            for waitable in self._waitables:
                waitable.add_to_wait_set(wait_set)
            self.full_waits += 1
        else:  # a stream flows: its set only, up to the next full wait
            wait_set = self._stream_wait_set
            wait_set.clear_entities()
            for add, handle in self._stream_adds:
                add(handle)
            left = self._next_full_wait - now
            timeout = left if timeout < 0 else min(timeout, left)
            self.stream_waits += 1
        wait_set.wait(timeout)
        if not self._context.ok():
            raise ExternalShutdownException()
        if self._closed:
            return
        ready = wait_set.get_ready_entities
        if full and self._timers:  # the streams' set holds no timer
            for pointer in ready("timer"):
                self._run_timer(self._timers.get(pointer))
        subscriptions = ready("subscription")
        if full and self._stream_adds:
            self._next_full_wait = time.monotonic_ns() + self._until_timer(FULL_WAIT_NS)
        elif not subscriptions:  # no stream message this time: the next wait takes in everything
            self._next_full_wait = 0
        takes = self._takes
        for pointer in subscriptions:
            self._run_subscription(takes.get(pointer))
        if self._guards:
            for pointer in ready("guard_condition"):
                guard = self._guards.get(pointer)
                if guard is not None and guard.callback is not None:
                    self._call("guard condition", guard.callback)
        if not full:
            return
        if self._clients:
            for pointer in ready("client"):
                self._run_client(self._clients.get(pointer))
        if self._services:
            for pointer in ready("service"):
                self._run_service(self._services.get(pointer))
        for waitable in self._waitables:
            if waitable.is_ready(wait_set):
                self._run_waitable(waitable)

    def _until_timer(self, most: int) -> int:
        """ns until the next timer is due, at most `most`."""
        for timer in self._timers.values():
            try:
                left = timer.time_until_next_call()
            except InvalidHandle:  # destroyed by a callback of this round: rebuilt before the next wait
                continue
            if left is not None and left < most:
                most = max(left, 0)
        return most

    def _poll_events(self) -> None:
        """Serve the QoS event handlers (incompatible QoS or type: warnings) from their own wait
        set, without waiting: every EVENT_POLL_NS rather than in every wait (a node has two or
        three per publisher and subscription; adding them to each wait would cost more than the
        rest of the wait set)."""
        wait_set = self._event_wait_set
        wait_set.clear_entities()
        try:
            for handler in self._events:
                handler.add_to_wait_set(wait_set)
        except InvalidHandle:  # destroyed meanwhile: the tables are rebuilt first
            self._stale = True
            return
        wait_set.wait(0)
        for handler in self._events:
            if handler.is_ready(wait_set):
                self._run_waitable(handler)

    # --- the tables ------------------------------------------------------------------------

    def _rebuild(self) -> None:
        """Entity tables from the nodes' current entities; a new rcl wait set only when a count
        grew beyond the current one's capacity."""
        from rclpy.waitable import NumberOfEntities

        self._stale = False
        self.rebuilds += 1
        nodes = self.get_nodes()
        subs = [s for n in nodes for s in n.subscriptions]
        timers = [t for n in nodes for t in n.timers]
        clients = [c for n in nodes for c in n.clients]
        services = [s for n in nodes for s in n.services]
        guards = [g for n in nodes for g in n.guards]
        waitables = [w for n in nodes for w in n.waitables]
        self._events = [w for w in waitables if _is_qos_event(w)]
        self._waitables = [w for w in waitables if not _is_qos_event(w)]
        size = _capacity(
            NumberOfEntities(len(subs), len(guards) + 2, len(timers), len(clients), len(services)),
            self._waitables,
        )
        if self._wait_set is None or _exceeds(size, self._size):
            self._wait_set = self._impl.WaitSet(*size, self._context.handle)
            self._size = size
        event_size = _capacity(NumberOfEntities(), self._events)
        if self._events and (self._event_wait_set is None or _exceeds(event_size, self._event_size)):
            self._event_wait_set = self._impl.WaitSet(*event_size, self._context.handle)
            self._event_size = event_size
        streams: list[Any] = []
        if any(s in _STREAMS for s in subs):  # with /clock (use_sim_time), in the full set's order
            streams = [s for s in subs if s in _STREAMS or _is_clock(s)]
        stream_size = (len(streams), len(guards) + 2, 0, 0, 0, 0)
        if streams and (self._stream_wait_set is None or _exceeds(stream_size, self._stream_size)):
            self._stream_wait_set = self._impl.WaitSet(*stream_size, self._context.handle)
            self._stream_size = stream_size
        ws = self._wait_set
        self._takes = _takes(subs)
        self._timers = _by_pointer(timers)
        self._clients = _by_pointer(clients)
        self._services = _by_pointer(services)
        self._guards = _by_pointer(guards)
        adds: list[tuple[Callable, Any]] = []
        adds += [(ws.add_guard_condition, g.handle) for g in (self._rebuild_gc, self._sigint_guard, *guards)]
        adds += [(ws.add_timer, t.handle) for t in timers]
        adds += [(ws.add_subscription, s.handle) for s in subs]
        adds += [(ws.add_client, c.handle) for c in clients]
        adds += [(ws.add_service, s.handle) for s in services]
        self._adds = adds
        self.streams = streams
        self._stream_adds = []
        if streams:
            sws = self._stream_wait_set
            own = (self._rebuild_gc, self._sigint_guard)
            self._stream_adds += [(sws.add_guard_condition, g.handle) for g in (*own, *guards)]
            self._stream_adds += [(sws.add_subscription, s.handle) for s in streams]
        self._next_full_wait = 0

    # --- running what is ready -------------------------------------------------------------

    def _call(self, where: str, callback: Callable, *args: Any) -> Any:
        """callback(*args); an exception costs this call and goes to the node's error handler."""
        try:
            result = callback(*args)
            if result is not None and inspect.iscoroutine(result):
                _drive(result)
                return None
            return result
        except ExternalShutdownException:
            raise
        except Exception as exc:  # noqa: BLE001 - the point: no callback may end the process
            self._error(where, f"{type(exc).__name__}: {exc}")
            return None

    def _error(self, where: str, text: str) -> None:
        if self._on_error is not None:
            try:
                self._on_error(where, text)
                return
            except Exception:  # noqa: BLE001, S110 - the handler itself failed: log below
                pass
        rclpy.logging.get_logger("waitset_loop").error(f"{where} callback failed: {text}")

    def _run_timer(self, timer: Any) -> None:
        if timer is None:
            return
        try:
            handle = timer.handle
            if not handle.is_timer_ready():  # a cancelled timer can show as ready
                return
            handle.call_timer()
        except InvalidHandle:  # destroyed by an earlier callback of this round
            return
        self._call("timer", timer.callback)

    def _run_subscription(self, take: _Take | None) -> None:
        if take is None:
            return
        take_message, msg_type, raw, sub, where = take
        try:
            taken = take_message(msg_type, raw)
        except InvalidHandle:
            return
        if taken is None:
            return
        # the callback as now set (rclpy lets it be replaced), with the message info if it takes it
        if _WITH_INFO is not None and getattr(sub, "_callback_type", None) is _WITH_INFO:
            self._call(where, sub.callback, *taken)
        else:
            self._call(where, sub.callback, taken[0])

    def _run_client(self, client: Any) -> None:
        if client is None:
            return
        try:
            header, response = client.handle.take_response(client.srv_type.Response)
        except InvalidHandle:
            return
        if header is None:
            return
        try:
            future = client.get_pending_request(header.request_id.sequence_number)
        except KeyError:  # the request was cancelled
            return
        self._call("client", future.set_result, response)

    def _run_service(self, srv: Any) -> None:
        if srv is None:
            return
        try:
            request, header = srv.handle.service_take_request(srv.srv_type.Request)
        except InvalidHandle:
            return
        if header is None:
            return
        name = getattr(srv, "srv_name", "?")
        response = self._call(f"service {name}", srv.callback, request, srv.srv_type.Response())
        if response is not None:
            self._call(f"service {name}", srv.send_response, response, header)

    def _run_waitable(self, waitable: Any) -> None:
        try:
            data = waitable.take_data()
        except InvalidHandle:
            return
        self._call(type(waitable).__name__, waitable.execute, data)

    def _run_tasks(self) -> None:
        pending, self._tasks_pending = self._tasks_pending, []
        for task in pending:
            self._call("task", task)
            if not task.done() and not task.cancelled():
                self._tasks_pending.append(task)


# A subscription as the loop serves it: (take_message, msg_type, raw, the subscription, where for
# errors); built at rebuild, so that a message costs no lookup through the handle or the name.
_Take = tuple[Callable, Any, bool, Any, str]
# Jazzy+: a callback that also takes the message info (set with the callback; absent: message only)
_WITH_INFO = getattr(getattr(Subscription, "CallbackType", None), "WithMessageInfo", None)


def _takes(subscriptions: Iterable[Any]) -> dict[int, _Take]:
    return {
        pointer: (sub.handle.take_message, sub.msg_type, sub.raw, sub, f"subscription {sub.topic_name}")
        for pointer, sub in _by_pointer(subscriptions).items()
    }


def _capacity(count: Any, waitables: list[Any]) -> tuple[int, ...]:
    """The WaitSet constructor's counts for these entities plus the waitables' own."""
    for waitable in waitables:
        count += waitable.get_num_entities()
    return (
        count.num_subscriptions,
        count.num_guard_conditions,
        count.num_timers,
        count.num_clients,
        count.num_services,
        count.num_events,
    )


def _exceeds(size: tuple[int, ...], capacity: tuple[int, ...]) -> bool:
    return any(a > b for a, b in zip(size, capacity, strict=True))


def _is_clock(subscription: Any) -> bool:
    """The /clock subscription of use_sim_time (rclpy's TimeSource): a stream whenever there are
    streams, as the node's time (stamps' ages, trajectory sampling) moves with it; a node without
    streams waits on everything anyway."""
    try:
        return subscription.topic_name == "/clock"
    except InvalidHandle:
        return False


def _is_qos_event(waitable: Any) -> bool:
    return _EVENT_HANDLER is not None and isinstance(waitable, _EVENT_HANDLER)


def _by_pointer(entities: Iterable[Any]) -> dict[int, Any]:
    table = {}
    for entity in entities:
        try:
            table[entity.handle.pointer] = entity
        except InvalidHandle:
            continue
    return table


class _DefaultExecutor(SingleThreadedExecutor):
    """rclpy's default executor, of which one whose __init__ failed (a context shut down
    meanwhile) leaves nothing for its __del__ to complain about (see WaitSetExecutor)."""

    _sigint_gc: Any = None


def spin_waitset(node: Node) -> None:
    """Spin `node` on a WaitSetExecutor until shutdown, every callback's exception going to the
    node's `_internal_error(where, text)` when it has one; on an rclpy without the API the loop
    needs (`missing_api`), log what is missing and spin rclpy's default executor instead."""
    missing = missing_api()
    log = node.get_logger()
    if missing is not None:
        log.warn(f"this rclpy lacks {missing}: spinning rclpy's default executor, not the wait-set loop")
        with shutdown_is_a_stop(node.context):
            fallback = _DefaultExecutor(context=node.context)
        fallback.add_node(node)
        try:
            with shutdown_is_a_stop(node.context):  # it builds a wait set in every wait
                fallback.spin()
        finally:
            join_signal_shutdown()
            fallback.shutdown()
        return
    executor = WaitSetExecutor(context=node.context, on_error=getattr(node, "_internal_error", None))
    executor.add_node(node)
    log.info("spinning the wait-set loop (one wait set, messages taken directly)")
    try:
        executor.spin()
    finally:
        join_signal_shutdown()  # before any wait set or guard condition is destroyed
        executor.shutdown()
