"""A small client speaking the Streamlit browser protocol, for the deployment tests and the load benchmark.

What a browser tab does, minus the drawing: ``GET /_stcore/health`` (which sets the XSRF cookie,
and behind the proxy the affinity cookie), a websocket to ``/_stcore/stream`` that sends
``BackMsg`` protobufs (``rerun_script`` with the page and the widget states) and reads
``ForwardMsg`` protobufs until ``script_finished``, and uploads with ``PUT
/_stcore/upload_file/<session>/<file>`` after asking the server for the URLs.  Widgets are named
by their ``key=``; the protobuf field of a widget's value follows from the element type, as in
the browser.  Uses only Streamlit's own dependencies (its protobuf classes, ``websockets``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import FileURLs
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

XSRF_COOKIE = "_streamlit_xsrf"
MAIN, SIDEBAR = 0, 1  # the first index of a delta path: the app's main area or its sidebar
FINAL_STATUSES = {
    ForwardMsg.FINISHED_SUCCESSFULLY,
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
}


class ProtocolError(RuntimeError):
    """The server answered something a browser would not have expected."""


@dataclass
class Element:
    """One element a script run drew: its type (``metric``, ``markdown``, ``slider`` …) and protobuf."""

    kind: str
    proto: Any
    path: tuple[int, ...]
    fragment: str = ""  # the id of the st.fragment it was drawn in ("" outside any fragment)

    @property
    def container(self) -> int:
        return self.path[0] if self.path else MAIN

    @property
    def key(self) -> str | None:
        """The widget's ``key=`` (Streamlit ends the element id with it), or None."""
        element_id = getattr(self.proto, "id", "")
        if not isinstance(element_id, str) or not element_id.startswith("$$ID-"):
            return None
        parts = element_id.split("-", 2)
        return parts[2] if len(parts) == 3 and parts[2] != "None" else None


@dataclass
class Run:
    """What one script run sent: its elements (last delta at each path), how long it took."""

    seconds: float
    status: int
    elements: list[Element] = field(default_factory=list)
    page_not_found: bool = False
    received: int = 0  # bytes the server sent for this run

    @property
    def fragment_only(self) -> bool:
        """The run was a fragment's rerun: ``elements`` are the page's, with the fragment's redrawn."""
        return self.status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY

    def of_kind(self, kind: str, container: int | None = None) -> list[Element]:
        return [e for e in self.elements if e.kind == kind and (container is None or e.container == container)]

    def texts(self, container: int | None = None) -> list[str]:
        """The markdown/caption/heading/alert/metric text of the run, in order."""
        out = []
        for e in self.elements:
            if container is not None and e.container != container:
                continue
            if e.kind in ("markdown", "alert", "heading", "text"):
                out.append(e.proto.body)
            elif e.kind == "metric":
                out.append(f"{e.proto.label}: {e.proto.body}")
        return out

    def metrics(self) -> dict[str, str]:
        return {e.proto.label: e.proto.body for e in self.of_kind("metric")}

    @property
    def exceptions(self) -> list[str]:
        return [f"{e.proto.type}: {e.proto.message}" for e in self.of_kind("exception")]

    @property
    def errors(self) -> list[str]:
        return [e.proto.body for e in self.of_kind("alert") if e.proto.format == e.proto.ERROR]

    def widget(self, key: str) -> Element:
        for e in self.elements:
            if e.key == key:
                return e
        raise KeyError(f"no widget with key {key!r} in this run (keys: {sorted(k for k in self.keys() if k)})")

    def keys(self) -> list[str | None]:
        return [e.key for e in self.elements]


def _cookie_pairs(headers: list[tuple[str, str]]) -> dict[str, str]:
    cookies = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            pair = value.split(";", 1)[0]
            if "=" in pair:
                k, v = pair.split("=", 1)
                cookies[k.strip()] = v.strip()
    return cookies


def _multipart(name: str, content: bytes, mime: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: {mime}\r\n\r\n"
    ).encode()
    return head + content + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Session:
    """One browser tab on ``base_url`` (``http://host:port``), opened on ``page`` (its url path)."""

    def __init__(self, base_url: str, page: str = "", query: str = "", timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.page = page
        self.query = query
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.session_id = ""
        self.last: Run | None = None
        self.pages: list[str] = []  # the url paths of the app's pages, from its navigation
        self._ws: ClientConnection | None = None
        self._states: dict[str, WidgetState] = {}  # widget id → the value this tab last sent
        self._pending: list[ForwardMsg] = []  # messages that arrived outside a script run
        self._received = 0  # bytes received so far

    # ------------------------------------------------------------------ HTTP

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        base_url: str | None = None,
        cookies: Mapping[str, str] | None = None,
    ) -> int:
        """One HTTP request with this tab's cookies (or ``cookies``); keeps the cookies set; the status."""
        request = urllib.request.Request((base_url or self.base_url) + path, data=body, method=method)
        sent = self.cookies if cookies is None else cookies
        if sent:
            request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in sent.items()))
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                if cookies is None:
                    self.cookies.update(_cookie_pairs(response.headers.items()))
                response.read()
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    # ------------------------------------------------------------------ websocket

    async def open(self) -> Run:
        """Load the page as a new tab does: health check (cookies), websocket, first script run."""
        start = time.perf_counter()
        status = await asyncio.to_thread(self.request, "GET", "/_stcore/health")
        if status != 200:
            raise ProtocolError(f"{self.base_url}/_stcore/health answered HTTP {status}")
        ws_url = "ws" + self.base_url[len("http") :] + "/_stcore/stream"
        protocols = ["streamlit", self.cookies.get(XSRF_COOKIE, "")] if XSRF_COOKIE in self.cookies else ["streamlit"]
        headers = {"Origin": self.base_url}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self._ws = await connect(
            ws_url,
            subprotocols=protocols,  # type: ignore[arg-type]
            additional_headers=headers,
            max_size=None,
            compression=None,
            open_timeout=self.timeout,
            ping_interval=None,
        )
        run = await self.rerun()
        run.seconds = time.perf_counter() - start
        self.last = run
        return run

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def __aenter__(self) -> Session:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _send(self, msg: BackMsg) -> None:
        if self._ws is None:
            raise ProtocolError("the session is not open")
        await self._ws.send(msg.SerializeToString())

    async def _receive(self, pending: bool = True) -> ForwardMsg:
        if pending and self._pending:
            return self._pending.pop(0)
        if self._ws is None:
            raise ProtocolError("the session is not open")
        data = await asyncio.wait_for(self._ws.recv(), self.timeout)
        self._received += len(data)
        msg = ForwardMsg()
        msg.ParseFromString(data if isinstance(data, bytes) else data.encode())
        return msg

    async def rerun(self, values: Mapping[str, Any] | None = None, page: str | None = None) -> Run:
        """Set widgets (``{key: value}``, as the user would) and/or go to ``page``; the run that follows.

        As in the browser, a change to widgets that all sit in one ``st.fragment`` reruns only that
        fragment (the run's elements are then the page's, with the fragment's redrawn).
        """
        if page is not None:
            self.page = page
        fragments = set()
        for key, value in (values or {}).items():
            fragments.add(self._set(key, value))
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_name = self.page
        state.widget_states.widgets.extend(self._states.values())
        if page is None and len(fragments) == 1 and "" not in fragments:
            state.fragment_id = fragments.pop()
        start = time.perf_counter()
        await self._send(msg)
        run = await self._collect(start, state.fragment_id)
        for widget_id in [i for i, s in self._states.items() if s.WhichOneof("value") == "trigger_value"]:
            del self._states[widget_id]  # a click is sent once
        self.last = run
        self._forget_gone_widgets(run)
        return run

    async def _collect(self, start: float, fragment: str = "") -> Run:
        elements: dict[tuple[int, ...], Element] = {}
        if fragment and self.last is not None:  # the rest of the page stays as it was
            elements = {e.path: e for e in self.last.elements}
        not_found = False
        received = self._received
        while True:
            msg = await self._receive()
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                elements.clear()
                self.session_id = msg.new_session.initialize.session_id or self.session_id
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                path = tuple(msg.metadata.delta_path)
                kind_of = element.WhichOneof("type") or ""
                proto = getattr(element, kind_of) if kind_of else element
                elements[path] = Element(kind_of, proto, path, msg.delta.fragment_id)
            elif kind == "navigation":
                self.pages = [page.url_pathname for page in msg.navigation.app_pages]
            elif kind == "page_not_found":
                not_found = True
            elif kind == "script_finished" and msg.script_finished in FINAL_STATUSES:
                ordered = [elements[p] for p in sorted(elements)]
                seconds = time.perf_counter() - start
                return Run(seconds, msg.script_finished, ordered, not_found, self._received - received)

    def _set(self, key: str, value: Any) -> str:
        """Keep the widget state a browser sends for ``value``, typed by the widget's element; its fragment."""
        if self.last is None:
            raise ProtocolError("open the session before setting widgets")
        element = self.last.widget(key)
        state = WidgetState(id=element.proto.id)
        kind = element.kind
        if kind == "number_input":
            state.double_value = float(value)
        elif kind == "slider":
            values = value if isinstance(value, (tuple, list)) else [value]
            state.double_array_value.data[:] = [float(v) for v in values]
        elif kind in ("radio", "selectbox"):
            options = list(element.proto.options)
            if str(value) not in options:
                raise ProtocolError(f"{key}: {value!r} is not one of the options {options}")
            state.string_value = str(value)
        elif kind == "multiselect":
            state.string_array_value.data[:] = [str(v) for v in value]
        elif kind == "checkbox":
            state.bool_value = bool(value)
        elif kind == "button":
            state.trigger_value = True
        elif kind == "text_input":
            state.string_value = str(value)
        elif kind == "file_uploader":
            state.file_uploader_state_value.CopyFrom(value)
        else:
            raise ProtocolError(f"{key}: setting a {kind} widget is not supported by this client")
        self._states[state.id] = state
        return element.fragment

    def _forget_gone_widgets(self, run: Run) -> None:
        shown = {getattr(e.proto, "id", None) for e in run.elements}
        for widget_id in [w for w in self._states if w not in shown]:
            del self._states[widget_id]

    # ------------------------------------------------------------------ uploads

    async def file_urls(self, name: str) -> FileURLs:
        """Ask the server where to upload a file called ``name`` (the browser's first step of an upload)."""
        request_id = uuid.uuid4().hex
        msg = BackMsg()
        msg.file_urls_request.request_id = request_id
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        await self._send(msg)
        while True:
            reply = await self._receive(pending=False)
            if reply.WhichOneof("type") == "file_urls_response" and reply.file_urls_response.response_id == request_id:
                break
            self._pending.append(reply)
        response = reply.file_urls_response
        if response.error_msg:
            raise ProtocolError(f"the server refused the upload URLs: {response.error_msg}")
        return response.file_urls[0]

    def put_file(
        self,
        urls: FileURLs,
        name: str,
        content: bytes,
        mime: str = "text/csv",
        base_url: str | None = None,
        cookies: Mapping[str, str] | None = None,
        xsrf: bool = True,
    ) -> int:
        """PUT the file to its upload URL as the browser does (to ``base_url`` if given); the HTTP status."""
        body, content_type = _multipart(name, content, mime)
        headers = {"Content-Type": content_type, "Origin": self.base_url}
        sent = self.cookies if cookies is None else cookies
        if xsrf and XSRF_COOKIE in sent:
            headers["X-Xsrftoken"] = sent[XSRF_COOKIE]
        path = urllib.parse.urlparse(urls.upload_url).path or urls.upload_url
        return self.request("PUT", path, body, headers, base_url=base_url, cookies=cookies)

    async def upload(self, key: str, name: str, content: bytes, mime: str = "text/csv") -> Run:
        """Upload ``content`` as ``name`` into the file uploader ``key``, as the browser does; the rerun."""
        element = self._require(key, "file_uploader")
        urls = await self.file_urls(name)
        status = await asyncio.to_thread(self.put_file, urls, name, content, mime)
        if status != 204:
            raise ProtocolError(f"the upload of {name} was refused with HTTP status {status}")
        state = WidgetState(id=element.proto.id)
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, len(content), urls.file_id
        info.file_urls.CopyFrom(urls)
        return await self.rerun({key: state.file_uploader_state_value})

    def _require(self, key: str, kind: str) -> Element:
        if self.last is None:
            raise ProtocolError("open the session before using widgets")
        element = self.last.widget(key)
        if element.kind != kind:
            raise ProtocolError(f"{key} is a {element.kind}, not a {kind}")
        return element


def http_status(base_url: str, path: str, method: str = "GET", headers: Mapping[str, str] = ()) -> int:
    """The HTTP status of one request (errors included), for checks on the proxy."""
    request = urllib.request.Request(base_url.rstrip("/") + path, method=method, headers=dict(headers))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def plotly_spec(element: Element) -> dict[str, Any]:
    """The figure of a ``plotly_chart`` element, as a dict."""
    return json.loads(element.proto.spec)


def run_async(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """``asyncio.run(coroutine)`` in a thread of its own: the end-to-end tests' Playwright keeps an event loop
    running in the main thread for the whole session, and ``asyncio.run`` refuses to start inside one."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=target, name="streamlit-ws")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")
