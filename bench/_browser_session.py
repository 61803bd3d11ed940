"""One simulated browser tab of a Streamlit app, speaking the app's own websocket protocol.

It does what Streamlit's frontend does, without drawing anything:

* opens the page: ``GET /?<link>`` and the scripts, styles and fonts that ``index.html`` names
  (``./static/...``), then ``/_stcore/health`` and ``/_stcore/host-config``, keeping the cookies
  (the XSRF cookie, and a proxy's stickiness cookie);
* connects ``/_stcore/stream`` with the subprotocols ``["streamlit", <xsrf token>]`` (plus the
  session id when it reconnects) and sends ``BackMsg.rerun_script`` with the link's query string;
* reads every ``ForwardMsg``: learns each widget's id, kind, value and fragment from the
  ``delta.new_element`` messages, follows the URL the app writes (``page_info_changed``), keeps
  cacheable messages by hash and answers ``ref_hash`` references from that cache (reporting the
  hashes it holds in the next rerun, as the browser's message cache does), and notes
  ``script_finished``;
* keeps the page's fragment timers (``auto_rerun``: a fragment's ``run_every``), dropped on ``stop_auto_rerun``
  and at every full run, and lets them fire when asked (:meth:`BrowserSession.follow_timers`), as the browser's
  intervals do;
* changes a control as the browser does: a ``rerun_script`` whose ``WidgetStates`` hold the value
  of *every* widget on the page with the changed one replaced (and the fragment id when the
  widget lives in a fragment);
* follows the change as the browser does, through every run the server starts for it: a run that
  ends ``FINISHED_EARLY_FOR_RERUN`` stopped for a rerun the server has already queued (a callback's
  ``st.rerun`` of the page or of named fragments), so the change goes on with that run; it ends
  at the first ``script_finished`` with another status (``FINISHED_SUCCESSFULLY``,
  ``FINISHED_FRAGMENT_RUN_SUCCESSFULLY``, ``FINISHED_WITH_COMPILE_ERROR``), after every
  ``ForwardMsg`` of its runs (the server sends a run's messages before its ``script_finished``). A run
  that starts after that, with no change sent, is counted (:attr:`BrowserSession.unasked_runs`): the
  rule above would have ended a change too early.

Messages are Streamlit's protobuf classes (``streamlit.proto``); the websocket is the
``websockets`` package that Streamlit itself depends on.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

__all__ = ["BrowserSession", "PageError", "RunResult"]

ASSET = re.compile(r'(?:src|href)="\./(static/[^"?#]+)"')
XSRF_COOKIE = "_streamlit_xsrf"
MESSAGE_CACHE_RUNS = 2  # a cached message not used in this many full runs is dropped
FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
FINISHED_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN  # the server has queued the next run of the same change
TEXT_ELEMENTS = {"markdown": "body", "alert": "body"}  # what a run's texts keep, by element
HTTP_TIMEOUT_S = 30.0


class PageError(RuntimeError):
    """The page could not be opened or a control could not be changed (what went wrong, in words)."""


@dataclass
class RunResult:
    """One change (or the page's opening) as the tab saw it: every run the server made for it.

    ``seconds``: from the BackMsg sent to the ``script_finished`` that ended the change (received);
    ``status``: that message's status; ``runs``: the script runs of the change (a run that ended
    ``FINISHED_EARLY_FOR_RERUN`` and the runs that followed it); ``texts``: what the change's last run
    drew: the Markdown of its text elements and the JSON data of its components, in order.
    """

    seconds: float
    status: int
    errors: list[str] = field(default_factory=list)
    received_bytes: int = 0
    runs: int = 1
    texts: list[str] = field(default_factory=list)


@dataclass
class _Widget:
    kind: str  # the Element oneof: "number_input", "selectbox", ...
    element: object  # the widget's proto as last sent
    fragment_id: str


def _widget_value(kind: str, element) -> WidgetState | None:
    """The value the browser keeps for a widget it was just sent (``None``: nothing to report)."""
    state = WidgetState(id=element.id)
    if kind == "number_input":
        if element.HasField("value"):
            number = element.value
        elif element.HasField("default"):
            number = element.default
        else:
            return None
        if element.data_type == NumberInput.INT:
            state.int_value = int(number)
        else:
            state.double_value = float(number)
    elif kind in {"text_area", "text_input"}:
        if not (element.HasField("value") or element.HasField("default")):
            return None
        state.string_value = element.value if element.HasField("value") else element.default
    elif kind == "checkbox":
        state.bool_value = element.value if element.set_value else element.default
    elif kind in {"selectbox", "radio"}:
        if element.HasField("raw_value"):
            state.string_value = element.raw_value
        elif element.HasField("default"):
            state.string_value = element.options[element.default]
        else:
            return None
    elif kind in {"button_group", "multiselect"}:
        labels = [o if isinstance(o, str) else o.content for o in element.options]
        chosen = list(element.raw_values) if element.set_value else [labels[i] for i in element.default]
        state.string_array_value.data.extend(chosen)
    else:  # buttons, download buttons, ...: a trigger is sent only with the click itself
        return None
    return state


def _changed_value(widget: _Widget, value: object) -> WidgetState:
    """The WidgetState a user's change of ``widget`` to ``value`` sends."""
    element, kind = widget.element, widget.kind
    state = WidgetState(id=element.id)
    if kind == "number_input":
        if element.data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = float(value)
    elif kind in {"text_area", "text_input"}:
        state.string_value = str(value)
    elif kind == "checkbox":
        state.bool_value = bool(value)
    elif kind in {"selectbox", "radio"}:
        if str(value) not in element.options:
            raise PageError(f"{kind} {element.id} has no option {value!r} (it has {list(element.options)})")
        state.string_value = str(value)
    elif kind == "button":
        state.trigger_value = True
    elif kind == "bidi_component":  # a component's state, as its setStateValue sends it (the head picker)
        state.json_value = json.dumps(value)
    else:
        raise PageError(f"changing a {kind} is not simulated")
    return state


class _HttpClient:
    """Blocking HTTP with a cookie jar, run on an executor's thread (one per tab)."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, url: str) -> bytes:
        request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip", "User-Agent": "room-bench"})
        with self._opener.open(request, timeout=HTTP_TIMEOUT_S) as response:
            return response.read()

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


class BrowserSession:
    """A browser tab on ``base_url`` (``http://host:port``) that opened ``query`` (a workshop link)."""

    def __init__(self, base_url: str, query: str, executor: Executor | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.query_string = query  # what the address bar shows; the app rewrites it
        self.reconnects = 0
        self.session_id = ""
        self._executor = executor
        self._http = _HttpClient()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task | None = None
        self._page_script_hash = ""
        self._widgets: dict[str, _Widget] = {}
        self._states: dict[str, WidgetState] = {}
        self._seen_this_run: set[str] = set()
        self._cache: dict[str, tuple[ForwardMsg, int]] = {}
        self._full_runs = 0
        self._finished: asyncio.Future | None = None
        self._run_errors: list[str] = []
        self._run_bytes = 0
        self._runs = 0  # script_finished messages of the change in progress
        self._texts: list[str] = []  # what the run in progress drew (RunResult.texts)
        self._lost = asyncio.Event()
        self.unasked_runs = 0  # runs that started when no change was in progress (see the module's docstring)
        self.timers: dict[str, float] = {}  # the page's fragment timers (run_every): fragment id -> seconds

    # ------------------------------------------------------------------ opening the page
    def _fetch_page(self) -> int:
        """``index.html`` of the link, the assets it names, health and host-config; bytes fetched."""
        index = self._http.get(f"{self.base_url}/?{self.query_string}")
        fetched = len(index)
        for path in dict.fromkeys(ASSET.findall(index.decode("utf-8", "replace"))):
            fetched += len(self._http.get(f"{self.base_url}/{path}"))
        for path in ("_stcore/health", "_stcore/host-config"):
            fetched += len(self._http.get(f"{self.base_url}/{path}"))
        return fetched

    async def _http_call(self, fn: Callable[[], int]) -> int:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def _connect(self) -> None:
        ws_url = "ws" + self.base_url.removeprefix("http") + "/_stcore/stream"
        tokens = [self._http.cookie(XSRF_COOKIE) or "PLACEHOLDER_AUTH_TOKEN"]
        if self.session_id:
            tokens.append(self.session_id)
        self._ws = await connect(
            ws_url,
            subprotocols=["streamlit", *tokens],
            additional_headers={"Cookie": self._http.header(), "Origin": self.base_url},
            max_size=None,
            compression=None,
            open_timeout=HTTP_TIMEOUT_S,
        )
        self._lost.clear()
        self._reader = asyncio.create_task(self._read(self._ws))

    async def open(self, timeout_s: float) -> tuple[float, RunResult]:
        """Open the page as a browser does; (seconds from the first request to the first run's end, that run)."""
        start = time.perf_counter()
        try:
            await self._http_call(self._fetch_page)
            await self._connect()
        except (OSError, ConnectionClosed, TimeoutError) as error:
            raise PageError(f"opening the page failed: {type(error).__name__}: {error}") from error
        result = await self._run(fragment_id="", timeout_s=timeout_s)
        return time.perf_counter() - start, result

    async def reload(self, timeout_s: float) -> tuple[float, RunResult]:
        """A page reload: a new tab state on the same cookies, opening the URL the app last wrote."""
        await self.close()
        self.session_id, self._page_script_hash = "", ""
        self._widgets.clear()
        self._states.clear()
        return await self.open(timeout_s)

    async def close(self) -> None:
        """Close the websocket (the tab is closed)."""
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        self._ws = self._reader = None

    # ------------------------------------------------------------------ the protocol
    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for data in ws:
                self._run_bytes += len(data)
                message = ForwardMsg()
                message.ParseFromString(data)
                self._handle(message)
        except ConnectionClosed:
            pass
        finally:
            if ws is self._ws:
                self._lost.set()

    def _handle(self, message: ForwardMsg) -> None:
        kind = message.WhichOneof("type")
        if kind == "ref_hash":
            cached = self._cache.get(message.ref_hash)
            if cached is None:
                self._run_errors.append(f"ref_hash {message.ref_hash} not in the message cache")
                return
            self._cache[message.ref_hash] = (cached[0], self._full_runs)
            message = cached[0]
            kind = message.WhichOneof("type")
        elif message.metadata.cacheable:
            self._cache[message.hash] = (message, self._full_runs)
        if kind == "new_session":  # a script run starts (a full run or a fragment run)
            if self._finished is None or self._finished.done():
                self.unasked_runs += 1
            self._seen_this_run, self._texts = set(), []
            self._page_script_hash = message.new_session.page_script_hash
            if message.new_session.HasField("initialize"):
                self.session_id = message.new_session.initialize.session_id
            if not message.metadata.run.fragment_ids:  # a full run: the browser clears every fragment timer
                self.timers.clear()
        elif kind == "auto_rerun":
            self.timers[message.auto_rerun.fragment_id] = message.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment_id in message.stop_auto_rerun.fragment_ids:
                self.timers.pop(fragment_id, None)
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            self._element(message.delta.new_element, message.delta.fragment_id)
        elif kind == "page_info_changed":
            self.query_string = message.page_info_changed.query_string
        elif kind == "script_finished":
            self._script_finished(message.script_finished)

    def _element(self, element: Element, fragment_id: str) -> None:
        kind = element.WhichOneof("type")
        if kind == "exception":
            self._run_errors.append(f"exception: {element.exception.type}: {element.exception.message[:120]}")
            return
        if kind == "alert" and element.alert.format == element.alert.ERROR:
            self._run_errors.append(f"st.error: {element.alert.body[:120]}")
            return
        if kind in TEXT_ELEMENTS:
            self._texts.append(getattr(getattr(element, kind), TEXT_ELEMENTS[kind]))
        elif kind == "bidi_component" and element.bidi_component.WhichOneof("data") == "json":
            self._texts.append(element.bidi_component.json)
        widget_id = getattr(getattr(element, kind), "id", "")
        if not widget_id.startswith("$$ID-"):
            return
        proto = getattr(element, kind)
        self._widgets[widget_id] = _Widget(kind, proto, fragment_id)
        self._seen_this_run.add(widget_id)
        if widget_id not in self._states or getattr(proto, "set_value", False):
            state = _widget_value(kind, proto)
            if state is not None:
                self._states[widget_id] = state

    def _script_finished(self, status: int) -> None:
        if status == ForwardMsg.FINISHED_SUCCESSFULLY:  # a full run: forget widgets it did not draw
            self._full_runs += 1
            for gone in set(self._widgets) - self._seen_this_run:
                self._widgets.pop(gone)
                self._states.pop(gone, None)
            oldest = self._full_runs - MESSAGE_CACHE_RUNS
            self._cache = {h: (m, used) for h, (m, used) in self._cache.items() if used >= oldest}
        self._runs += 1
        if status == FINISHED_FOR_RERUN:  # the next run of this change is already queued on the server
            return
        if self._finished is not None and not self._finished.done():
            self._finished.set_result((status, time.perf_counter()))

    def _rerun_message(self, fragment_id: str, changed: WidgetState | None, timer: bool = False) -> BackMsg:
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self._page_script_hash
        state.fragment_id = fragment_id
        state.is_auto_rerun = timer
        states = dict(self._states)
        if changed is not None:
            states[changed.id] = changed
        state.widget_states.widgets.extend(states.values())
        state.cached_message_hashes.extend(self._cache)
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        state.context_info.url = f"{self.base_url}/?{self.query_string}"
        return message

    async def _run(
        self, fragment_id: str, timeout_s: float, changed: WidgetState | None = None, timer: bool = False
    ) -> RunResult:
        """Send a rerun (``timer``: a fragment timer's) and follow it to the end of the change: through every run
        that ends ``FINISHED_EARLY_FOR_RERUN`` to the ``script_finished`` after which the server starts no other
        run for it. Reconnect (and resend) if the socket drops."""
        attempts = 0
        while True:
            self._finished = asyncio.get_running_loop().create_future()
            self._run_errors, self._run_bytes, self._runs = [], 0, 0
            start = time.perf_counter()
            try:
                await self._ws.send(self._rerun_message(fragment_id, changed, timer).SerializeToString())
            except ConnectionClosed:
                self._lost.set()
            lost = asyncio.ensure_future(self._lost.wait())
            done, _ = await asyncio.wait({self._finished, lost}, timeout=timeout_s, return_when="FIRST_COMPLETED")
            lost.cancel()
            if self._finished in done:
                status, finished_at = self._finished.result()
                if changed is not None and status in FINISHED_OK and changed.WhichOneof("value") != "trigger_value":
                    self._states[changed.id] = changed  # a click is sent once, as the browser resets its trigger
                errors = list(self._run_errors)
                if status not in FINISHED_OK:
                    errors.append(f"script_finished status {ForwardMsg.ScriptFinishedStatus.Name(status)}")
                seconds = finished_at - start
                return RunResult(seconds, status, errors, self._run_bytes, self._runs, list(self._texts))
            if not done:
                raise TimeoutError(f"the change did not end within {timeout_s:.0f} s ({self._runs} runs finished)")
            attempts += 1  # the websocket dropped: reconnect with the session id, as the browser does
            if attempts > 3:
                raise PageError("the websocket dropped three times in one run")
            self.reconnects += 1
            await self._reconnect()

    async def _reconnect(self) -> None:
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        for _ in range(20):
            try:
                await self._connect()
                return
            except (OSError, ConnectionClosed, TimeoutError):
                await asyncio.sleep(0.5)
        raise PageError("could not reconnect the websocket")

    # ------------------------------------------------------------------ the learner's side
    def widget_id(self, key: str) -> str:
        """The id of the widget with user key ``key`` on the page now (Streamlit ids end in ``-<key>``)."""
        found = [wid for wid in self._widgets if wid.endswith(f"-{key}")]
        if len(found) != 1:
            raise PageError(f"the page shows {len(found)} widgets with key {key!r}")
        return found[0]

    def url_value(self, key: str) -> str | None:
        """The value of ``key`` in the URL the app wrote last."""
        values = urllib.parse.parse_qs(self.query_string, keep_blank_values=True).get(key)
        return values[-1] if values else None

    async def change(self, key: str, value: object, timeout_s: float) -> RunResult:
        """Set the widget with user key ``key`` to ``value`` as a user would; the run it starts."""
        widget = self._widgets[self.widget_id(key)]
        return await self._run(widget.fragment_id, timeout_s, changed=_changed_value(widget, value))

    async def follow_timers(self, timeout_s: float) -> RunResult | None:
        """Let the page's fragment timers fire, one run after another as the browser's intervals would, until a run
        leaves none (a generation in progress: its fragment looks again every half second until the page reruns
        without it). The runs together: seconds from this call to the last run's end, their runs and errors, the
        last run's texts; ``None`` when no timer was set. ``timeout_s`` bounds the whole."""
        start, runs, errors, last = time.perf_counter(), 0, [], None
        while self.timers:
            fragment_id, interval = next(iter(self.timers.items()))
            left = timeout_s - (time.perf_counter() - start) - interval
            if left <= 0:
                raise TimeoutError(f"the page's fragment timers still ran after {timeout_s:.0f} s ({runs} runs)")
            await asyncio.sleep(interval)
            last = await self._run(fragment_id, left, timer=True)
            runs, errors = runs + last.runs, errors + last.errors
        if last is None:
            return None
        return RunResult(time.perf_counter() - start, last.status, errors, last.received_bytes, runs, last.texts)
