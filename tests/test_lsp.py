"""The language server, driven over stdio by a small JSON-RPC client."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Optional

import pytest

pytest.importorskip("pygls")

from lsprotocol import types as lsp  # noqa: E402

from torchlint.interfaces.lsp import Positions  # noqa: E402

TIMEOUT = 30.0
FIRE = "\U0001F525"  # outside the BMP: two UTF-16 code units, four UTF-8 bytes
SOURCE = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "\n"
    f'label = "{FIRE}"; x = torch.zeros(3).cuda()\n'
    "loader = DataLoader(ds)\n"
    'if __name__ == "__main__":\n'  # a main guard: TL201's fix is offered
    "    train(loader)\n"
)
SAFE_FIXED = SOURCE.replace("torch.zeros(3).cuda()", 'torch.zeros(3, device="cuda")')
CLEAN = "import torch\n\nx = torch.zeros(3)\n"


class Client:
    """A language client speaking JSON-RPC with Content-Length framing."""

    def __init__(self, cwd: Path) -> None:
        root = str(Path(__file__).resolve().parents[1])
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from torchlint.interfaces.lsp import main; main()"],
            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": root},
        )
        self._incoming: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self._stashed: List[Dict[str, Any]] = []
        self._stderr: List[bytes] = []
        self._next_id = 0
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True).start()

    # -- wire -----------------------------------------------------------

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    self._incoming.put(None)
                    return
                header = header.strip()
                if not header:
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self._incoming.put(json.loads(stream.read(length).decode("utf-8")))

    def _drain(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._stderr.append(line)

    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _receive(self, deadline: float) -> Dict[str, Any]:
        remaining = deadline - time.monotonic()
        try:
            message = self._incoming.get(timeout=max(remaining, 0.01))
        except queue.Empty:
            raise AssertionError(f"no message from the server in time; stderr:\n{self.stderr}") from None
        if message is None:
            raise AssertionError(f"the server closed its output; stderr:\n{self.stderr}")
        if "method" in message and "id" in message:  # a request to the client
            self._send({"id": message["id"], "result": None})
        return message

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # -- API ------------------------------------------------------------

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._receive(deadline)
            if message.get("id") == ident and "method" not in message:
                assert "error" not in message, message
                return message.get("result")
            self._stashed.append(message)

    def notification(self, method: str, accept: Callable[[Any], bool] = lambda p: True) -> Any:
        """The params of the next ``method`` notification that ``accept`` takes."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for index, message in enumerate(self._stashed):
                if message.get("method") == method and accept(message.get("params")):
                    del self._stashed[index]
                    return message["params"]
            self._stashed.append(self._receive(deadline))

    def diagnostics(self, uri: str) -> List[Dict[str, Any]]:
        params = self.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        return list(params["diagnostics"])

    def initialize(self, root: Path, capabilities: Dict[str, Any]) -> Any:
        result = self.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities},
        )
        self.notify("initialized", {})
        return result

    def stop(self) -> int:
        """shutdown, exit, and the server's exit status."""
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            return self.process.wait(timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def client(tmp_path: Path) -> Any:
    started = Client(tmp_path)
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait()


def _offset(text: str, position: Dict[str, int], encoding: str) -> int:
    """Character offset of an LSP position (lines split on \\n only: the tests use no \\r)."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position["line"]])
    units = 0
    for char in lines[position["line"]]:
        if units >= position["character"]:
            break
        units += len(char.encode(encoding)) // (2 if encoding == "utf-16-le" else 1)
        offset += 1
    return offset


def apply(text: str, edits: List[Dict[str, Any]], encoding: str = "utf-16-le") -> str:
    """Apply LSP TextEdits the way an editor does."""
    spans = [
        (_offset(text, e["range"]["start"], encoding), _offset(text, e["range"]["end"], encoding), e["newText"])
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def open_document(client: Client, path: Path, text: str, version: int = 1) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    return uri


def code_actions(client: Client, uri: str, start: Dict[str, int], end: Dict[str, int],
                 only: Optional[List[str]] = None) -> List[Dict[str, Any]]:
    context: Dict[str, Any] = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    result = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": {"start": start, "end": end}, "context": context},
    )
    return list(result or [])


def test_session_over_stdio(client: Client, tmp_path: Path) -> None:
    result = client.initialize(tmp_path, {
        "workspace": {"workspaceEdit": {"documentChanges": True}},
        "textDocument": {"codeAction": {"codeActionLiteralSupport": {
            "codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}}},
    })
    capabilities = result["capabilities"]
    assert "source.fixAll.torchlint" in capabilities["codeActionProvider"]["codeActionKinds"]
    assert result["serverInfo"]["name"] == "torchlint"

    # didOpen: findings, with UTF-16 columns after a non-BMP character.
    uri = open_document(client, tmp_path / "train.py", SOURCE)
    found = client.diagnostics(uri)
    assert [d["code"] for d in found] == ["TL101", "TL201"]
    tl101, tl201 = found
    line = SOURCE.splitlines()[3]
    start = line.index("torch.zeros")
    assert tl101["range"] == {
        "start": {"line": 3, "character": start + 1},  # the emoji counts twice
        "end": {"line": 3, "character": start + 1 + len("torch.zeros(3).cuda()")},
    }
    assert tl101["severity"] == 2 and tl101["source"] == "torchlint"
    assert "created on the CPU" in tl101["message"]
    # The code links to the rule's page: the rule's module, whose docstring it is.
    page = tl101["codeDescription"]["href"]
    assert page.startswith("file://") and page.endswith("/tensor_created_then_moved/__init__.py")
    assert tl201["range"]["start"] == {"line": 4, "character": 9}

    # Quick fix for the safe finding: a versioned document edit.
    actions = code_actions(client, uri, tl101["range"]["start"], tl101["range"]["start"])
    quick = [a for a in actions if a["kind"] == "quickfix" and "Suppress" not in a["title"]]
    assert len(quick) == 1 and "TL101" in quick[0]["title"] and "unsafe" not in quick[0]["title"]
    assert quick[0]["isPreferred"] is True
    assert quick[0]["diagnostics"][0]["code"] == "TL101"
    change = quick[0]["edit"]["documentChanges"][0]
    assert change["textDocument"] == {"uri": uri, "version": 1}
    assert apply(SOURCE, change["edits"]) == SAFE_FIXED

    # Every finding can be suppressed on its line, after its fix.
    suppress = [a for a in actions if "Suppress" in a["title"]]
    assert [a["title"] for a in suppress] == ["torchlint (TL101): Suppress on this line (# noqa: TL101)"]
    assert actions.index(suppress[0]) > actions.index(quick[0]) and suppress[0]["isPreferred"] is False
    suppressed = apply(SOURCE, suppress[0]["edit"]["documentChanges"][0]["edits"])
    assert suppressed.splitlines()[3].endswith("torch.zeros(3).cuda()  # noqa: TL101")

    # Hover on a finding: its rule's summary and where to read more.
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": tl101["range"]["start"]})
    assert hover["contents"]["kind"] == "markdown"
    assert hover["contents"]["value"].startswith("**TL101 tensor-created-then-moved**: ")
    assert "`torchlint explain TL101`" in hover["contents"]["value"] and page in hover["contents"]["value"]
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 0, "character": 0}}) is None

    # The unsafe one says so.
    actions = code_actions(client, uri, tl201["range"]["start"], tl201["range"]["end"], only=["quickfix"])
    actions = [a for a in actions if "Suppress" not in a["title"]]
    assert len(actions) == 1 and "TL201" in actions[0]["title"] and "unsafe" in actions[0]["title"]
    assert actions[0]["isPreferred"] is False
    edits = actions[0]["edit"]["documentChanges"][0]["edits"]
    assert apply(SOURCE, edits) == SOURCE.replace("DataLoader(ds)", "DataLoader(ds, num_workers=4)")

    # Fix all safe, as requested on save: only TL101 changes.
    everywhere = {"line": 0, "character": 0}
    actions = code_actions(client, uri, everywhere, everywhere, only=["source.fixAll"])
    assert [a["kind"] for a in actions] == ["source.fixAll.torchlint"]
    assert apply(SOURCE, actions[0]["edit"]["documentChanges"][0]["edits"]) == SAFE_FIXED
    assert code_actions(client, uri, everywhere, everywhere, only=["source.organizeImports"]) == []

    # didChange (incremental) to a clean text clears the findings.
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}},
            "text": CLEAN,
        }],
    })
    assert client.diagnostics(uri) == []

    # Back to a finding, then didClose clears it.
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": SOURCE}],
    })
    assert len(client.diagnostics(uri)) == 2
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []

    assert client.stop() == 0


def test_a_burst_of_changes_is_linted_once_at_its_last_version(client: Client, tmp_path: Path) -> None:
    """20 didChange notifications in one write: one publish, for version 21, of the last text."""
    client.initialize(tmp_path, {})
    uri = open_document(client, tmp_path / "train.py", CLEAN)
    assert client.diagnostics(uri) == []
    burst = b""
    for version in range(2, 22):
        # Each version adds one more unguarded DataLoader: its findings count its version.
        text = CLEAN + "from torch.utils.data import DataLoader\n" + "DataLoader(ds)\n" * (version - 1)
        body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}],
        }}).encode("utf-8")
        burst += b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert client.process.stdin is not None
    client.process.stdin.write(burst)
    client.process.stdin.flush()
    published = client.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
    assert published["version"] == 21 and len(published["diagnostics"]) == 20
    time.sleep(1.0)  # well past the debounce: a second lint would have published by now
    client.request("shutdown", None)  # a round trip: everything sent before it has arrived
    assert not [m for m in client._stashed if m.get("method") == "textDocument/publishDiagnostics"]
    client.notify("exit", None)
    assert client.process.wait(timeout=TIMEOUT) == 0


def test_cross_file_facts_match_the_command_line(client: Client, tmp_path: Path) -> None:
    """The wrapper's class lives in another module: the editor, like `torchlint
    check train.py`, knows its zero_grad takes no argument."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ntorch-version = "1.13"\n', encoding="utf-8")
    (tmp_path / "optim").mkdir()
    (tmp_path / "optim" / "__init__.py").write_text("from .wrap import Scheduled\n", encoding="utf-8")
    (tmp_path / "optim" / "wrap.py").write_text(
        "class Scheduled:\n    def __init__(self, inner):\n        self.inner = inner\n\n"
        "    def zero_grad(self):\n        self.inner.zero_grad()\n", encoding="utf-8")
    text = (
        "import torch\nfrom optim import Scheduled\n\n\n"
        "def train(model, loader):\n"
        "    wrapped = Scheduled(torch.optim.SGD(model.parameters(), lr=0.1))\n"
        "    plain = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x in loader:\n"
        "        wrapped.zero_grad()\n"
        "        plain.zero_grad()\n"
        "        model(x).sum().backward()\n"
    )
    client.initialize(tmp_path, {})
    uri = open_document(client, tmp_path / "train.py", text)
    found = [(d["code"], d["range"]["start"]["line"]) for d in client.diagnostics(uri)]
    assert found == [("TL302", 9)]  # `plain.zero_grad()`, not the wrapper's
    assert client.stop() == 0


def test_configuration_and_exclusion(client: Client, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-exclude = ["generated/"]\nignore = ["TL201"]\n', encoding="utf-8"
    )
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "pyproject.toml").write_text(
        '[tool.torchlint]\nselect = ["NOPE"]\n', encoding="utf-8"
    )
    # No documentChanges support: plain `changes`; the client prefers UTF-8.
    # (pygls 2 agrees to UTF-8; pygls 1 keeps UTF-16 and says so.)
    result = client.initialize(tmp_path, {"general": {"positionEncodings": ["utf-8", "utf-16"]}})
    encoding = {"utf-8": "utf-8", "utf-16": "utf-16-le"}[result["capabilities"].get("positionEncoding", "utf-16")]

    toml = open_document(client, tmp_path / "pyproject.toml", (tmp_path / "pyproject.toml").read_text())
    uri = open_document(client, tmp_path / "train.py", SOURCE)
    (tl101,) = client.diagnostics(uri)  # TL201 is ignored by the configuration
    assert not any(m.get("params", {}).get("uri") == toml for m in client._stashed)  # not Python
    line = SOURCE.splitlines()[3]
    width = 1 if encoding == "utf-8" else 2
    assert tl101["range"]["start"]["character"] == len(line[: line.index("torch.zeros")].encode(encoding)) // width
    action, suppression = code_actions(client, uri, tl101["range"]["start"], tl101["range"]["end"], only=["quickfix"])
    assert apply(SOURCE, action["edit"]["changes"][uri], encoding=encoding) == SAFE_FIXED
    assert apply(SOURCE, suppression["edit"]["changes"][uri], encoding=encoding).splitlines()[3].endswith(
        "  # noqa: TL101")  # the suppression's position is in the negotiated encoding too

    assert client.diagnostics(open_document(client, tmp_path / "generated" / "model.py", SOURCE)) == []

    broken = open_document(client, tmp_path / "broken" / "train.py", SOURCE)
    message = client.notification("window/showMessage")
    assert message["type"] == lsp.MessageType.Error.value and "NOPE" in message["message"]
    assert client.diagnostics(broken) == []
    assert code_actions(client, broken, {"line": 0, "character": 0}, {"line": 0, "character": 0}) == []

    # Saving a configuration file lints the open documents again.
    (tmp_path / "broken" / "pyproject.toml").write_text('[tool.torchlint]\nselect = ["TL2"]\n', encoding="utf-8")
    client.notify("textDocument/didSave", {"textDocument": {"uri": (tmp_path / "broken" / "pyproject.toml").as_uri()}})
    assert [d["code"] for d in client.diagnostics(broken)] == ["TL201"]
    assert client.stop() == 0


@pytest.mark.parametrize("encoding, expected", [("utf-16", 3), ("utf-8", 5), ("utf-32", 2)])
def test_positions_count_code_units(encoding: str, expected: int) -> None:
    text = f"a{FIRE}b\r\nxy\rz\n"
    positions = Positions(text, encoding)
    assert positions.position(2) == lsp.Position(line=0, character=expected)
    assert positions.offset(lsp.Position(line=0, character=expected)) == 2
    assert positions.position(len(text)) == lsp.Position(line=3, character=0)
    assert positions.position(5) == lsp.Position(line=1, character=0)  # after "\r\n"
    assert positions.position(4) == positions.position(3)  # never between "\r" and "\n"
    assert positions.offset(lsp.Position(line=2, character=99)) == 9  # clamped to the line
    assert positions.from_engine(3, 1) == 8
