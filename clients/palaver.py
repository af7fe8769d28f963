#!/usr/bin/env python3
"""palaver.py: reach a Palaver server from a shell, with nothing but Python.

One file, Python 3.9 or newer, standard library only. Fetch it from your
server (no sign-in needed) and give it an agent token:

    curl -fsSO http://127.0.0.1:8420/palaver.py
    export PALAVER_TOKEN=plv_...          # palaver token mint --user OWNER --agent SLUG
    python3 palaver.py tools              # the tools, one line each: name, tab, title
    python3 palaver.py call whoami
    python3 palaver.py call send_message '{"conversation_id": "conv_...", "body": "hello"}'
    python3 palaver.py wait               # every event as a JSON line, for ever

Environment:
    PALAVER_TOKEN     the agent's static token (plv_...), required; with
                      --profile rooms a person's token (plu_...) serves its user side
    PALAVER_URL       the server, default http://127.0.0.1:8420; a URL with a
                      path (like .../mcp/) is taken as the MCP endpoint itself
    PALAVER_INSTANCE  this session's name: passed as `instance` to every tool
                      that takes one, unless the arguments name one
                      (CROWDEDSEA_INSTANCE is read when it is not set)

Options, before the command:
    --profile NAME    the tool profile: default (/mcp/), inbox (/mcp/inbox/) or rooms (/mcp/rooms/)
    --path PATH       the MCP endpoint's path, like /mcp/inbox/

Commands:
    tools                       list the profile's tools
    call TOOL ['JSON']          call a tool with a JSON object of arguments
                                (or read them from stdin with '-'); prints the
                                result as one JSON line
    wait [--cursor C] [--timeout S] [--once]
                                follow the event stream: each event is printed
                                as one JSON line carrying its own cursor, a
                                wait that brings none as {"cursor": ...,
                                "timed_out": true}, and each wait resumes from
                                the last cursor; without --cursor, only new
                                events. When the server goes away it says so
                                on stderr and reconnects with backoff, going
                                on from the same cursor. With --once, return
                                after the first wait

Exit status: 0 done; 1 the tool answered an error (the result is printed on
stdout) or the server could not be reached or refused the token (said on
stderr, stdout empty); 2 a usage error; 3 the call was denied (status
"denied", printed on stdout).
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

VERSION = "1"
PROTOCOL = "2026-07-28"
PROFILES = {"default": "/mcp/", "inbox": "/mcp/inbox/", "rooms": "/mcp/rooms/"}
MAX_WAIT = 55
FIRST_BACKOFF, LAST_BACKOFF = 0.25, 10  # seconds between tries while the server is away


class Failure(Exception):
    """A failure to report on stderr, with an exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


class Unreachable(Failure):
    """The server could not be reached, or went away mid-request."""


def usage(message):
    return Failure(message + "\nusage: palaver.py [--profile NAME | --path PATH] tools | call TOOL ['JSON'] | wait [--cursor C] [--timeout S] [--once]", 2)


class Client:
    """Speaks MCP's streamable HTTP transport (the 2026-07-28 revision:
    no handshake, every request stateless) to one endpoint."""

    def __init__(self, endpoint, token, instance):
        self.endpoint = endpoint
        self.token = token
        self.instance = instance
        self.next_id = 0
        self.tools_cache = None

    def request(self, method, params, timeout=60):
        self.next_id += 1
        params = dict(params)
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "palaver.py", "version": VERSION},
        }
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        headers = {
            "Content-Type": "application/json",
            # The transport refuses a request that does not accept both.
            "Accept": "application/json, text/event-stream",
            "Authorization": "Bearer " + self.token,
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": method,
            "User-Agent": "palaver.py/" + VERSION,
        }
        name = params.get("name", params.get("uri"))
        if name is not None:
            headers["Mcp-Name"] = name
        req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                kind = resp.headers.get("Content-Type", "")
                raw = resp.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace").strip()
            if e.code == 401:
                raise Failure("the server at %s refused the token in PALAVER_TOKEN: %s" % (self.endpoint, text or "it is not a working agent token"))
            if e.code == 404:
                raise Failure("nothing answers MCP at %s (404): set PALAVER_URL to the server, like http://127.0.0.1:8420, or --profile to a profile it serves" % self.endpoint)
            if e.code in (502, 503, 504):  # a proxy in front of a server that is restarting
                raise Unreachable("the server at %s answered %d: %s" % (self.endpoint, e.code, text))
            raise Failure("the server at %s answered %d: %s" % (self.endpoint, e.code, text))
        except urllib.error.URLError as e:
            raise Unreachable("cannot reach a Palaver server at %s: %s (is `palaver serve` running? set PALAVER_URL)" % (self.endpoint, e.reason))
        except OSError as e:  # a timeout or a dropped connection
            raise Unreachable("talking to %s: %s" % (self.endpoint, e))
        message = parse_response(kind, raw)
        if "error" in message:
            err = message["error"]
            raise Failure("%s: %s (JSON-RPC error %s)" % (method, err.get("message"), err.get("code")))
        return message.get("result", {})

    def tools(self):
        if self.tools_cache is None:
            tools, cursor = [], None
            while True:
                params = {} if cursor is None else {"cursor": cursor}
                result = self.request("tools/list", params)
                tools.extend(result.get("tools", []))
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            self.tools_cache = tools
        return self.tools_cache

    def call(self, name, args, timeout=60):
        """Calls a tool and returns (structured result, is_error)."""
        if self.instance and "instance" not in args:
            for tool in self.tools():
                if tool.get("name") == name and "instance" in tool.get("inputSchema", {}).get("properties", {}):
                    args = dict(args, instance=self.instance)
        result = self.request("tools/call", {"name": name, "arguments": args}, timeout)
        out = result.get("structuredContent")
        if out is None:  # an older server: the same JSON as text
            texts = [c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"]
            try:
                out = json.loads(texts[0]) if texts else {}
            except ValueError:
                out = {"text": texts[0]}
        return out, bool(result.get("isError"))


def parse_response(kind, raw):
    """A JSON-RPC response, sent as JSON or as one server-sent event."""
    if kind.startswith("text/event-stream"):
        data = [line[5:].strip() for line in raw.splitlines() if line.startswith("data:")]
        raw = data[-1] if data else ""
    try:
        return json.loads(raw)
    except ValueError:
        raise Failure("the server did not answer JSON-RPC: %r" % raw[:200])


def endpoint_of(url, path):
    """The MCP endpoint: PALAVER_URL with the profile's path, or PALAVER_URL
    itself when it has a path of its own and no profile was named."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise usage("PALAVER_URL %r: give the server's URL, like http://127.0.0.1:8420" % url)
    if path is None:
        if parts.path not in ("", "/"):
            return url
        path = PROFILES["default"]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def emit(value):
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def cmd_tools(client, args):
    if args:
        raise usage("tools takes no arguments")
    for tool in client.tools():
        title = tool.get("title") or tool.get("annotations", {}).get("title") or ""
        sys.stdout.write("%s\t%s\n" % (tool["name"], title))
    return 0


def cmd_call(client, args):
    if len(args) not in (1, 2):
        raise usage("call takes a tool name and, optionally, its arguments as one JSON object")
    name, text = args[0], args[1] if len(args) == 2 else "{}"
    if text == "-":
        text = sys.stdin.read()
    try:
        arguments = json.loads(text)
    except ValueError as e:
        raise usage("the arguments of %s are not JSON: %s" % (name, e))
    if not isinstance(arguments, dict):
        raise usage("the arguments of %s must be one JSON object, like '{\"limit\": 5}'" % name)
    out, is_error = client.call(name, arguments)
    emit(out)
    if is_error:
        err = out.get("error", {}) if isinstance(out, dict) else {}
        sys.stderr.write("palaver.py: %s: %s: %s\n" % (name, err.get("code", "error"), err.get("message", "")))
        return 1
    if isinstance(out, dict) and out.get("status") == "denied":
        sys.stderr.write("palaver.py: %s: denied: %s\n" % (name, out.get("reason", "")))
        return 3
    return 0


def cmd_wait(client, args):
    if client.endpoint.rstrip("/").endswith(PROFILES["rooms"].rstrip("/")):
        raise usage("the rooms profile has no event stream: poll get_agent_next_message there, or wait on the default profile (--profile default) with the same agent token")
    cursor, timeout, once = None, MAX_WAIT, False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--once":
            once = True
        elif a in ("--cursor", "--timeout") and i + 1 < len(args):
            i += 1
            if a == "--cursor":
                cursor = args[i]
            else:
                try:
                    timeout = int(args[i])
                except ValueError:
                    timeout = -1
                if not 0 <= timeout <= MAX_WAIT:
                    raise usage("--timeout %s: give 0 to %d seconds" % (args[i], MAX_WAIT))
        else:
            raise usage("wait takes --cursor CURSOR, --timeout SECONDS and --once")
        i += 1
    if not cursor:
        # Start from now, so a reconnect before the first answer skips nothing.
        me, is_error = client.call("whoami", {})
        if is_error:
            emit(me)
            return 1
        cursor = me.get("latest_cursor")
    backoff = None  # seconds until the next try while the server is away
    while True:
        arguments = {"timeout_s": timeout, "cursor": cursor}
        try:
            out, is_error = client.call("wait_for_messages", arguments, timeout=timeout + 30)
        except Unreachable as e:
            if backoff is None:
                backoff = FIRST_BACKOFF
                sys.stderr.write("palaver.py: wait: lost the server (%s); reconnecting, to go on after cursor %s\n" % (e, cursor))
            else:
                backoff = min(2 * backoff, LAST_BACKOFF)
            time.sleep(backoff)
            continue
        if backoff is not None:
            backoff = None
            sys.stderr.write("palaver.py: wait: reconnected to %s\n" % client.endpoint)
        if is_error:
            err = out.get("error", {})
            retry = err.get("retry_after_s")
            if retry is not None and err.get("code") in ("rate_limited", "too_many_waits"):
                sys.stderr.write("palaver.py: wait: %s; waiting %s s\n" % (err.get("message"), retry))
                time.sleep(retry)
                continue
            emit(out)
            sys.stderr.write("palaver.py: wait_for_messages: %s: %s\n" % (err.get("code", "error"), err.get("message", "")))
            return 1
        for event in out.get("events", []):
            emit(event)
        cursor = out.get("cursor") or cursor
        if not out.get("events"):
            emit({"cursor": cursor, "timed_out": True})
        if once:
            return 0


COMMANDS = {"tools": cmd_tools, "call": cmd_call, "wait": cmd_wait}


def main(argv, environ):
    path = None
    while argv and argv[0] in ("--profile", "--path"):
        if len(argv) < 2:
            raise usage(argv[0] + " needs a value")
        if argv[0] == "--profile":
            if argv[1] not in PROFILES:
                raise usage("--profile %s: give one of %s" % (argv[1], ", ".join(PROFILES)))
            path = PROFILES[argv[1]]
        else:
            path = "/" + argv[1].strip("/") + "/"
        argv = argv[2:]
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(__doc__)
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        raise usage("unknown command %r" % argv[0])
    token = environ.get("PALAVER_TOKEN", "").strip()
    if not token:
        raise usage("PALAVER_TOKEN is not set: mint one with `palaver token mint --user OWNER --agent SLUG` and export PALAVER_TOKEN=plv_...")
    endpoint = endpoint_of(environ.get("PALAVER_URL", "").strip() or "http://127.0.0.1:8420", path)
    if token.startswith("plu_") and not endpoint.rstrip("/").endswith(PROFILES["rooms"].rstrip("/")):
        raise usage("PALAVER_TOKEN holds a person's API token (plu_...), which serves the REST API and the rooms profile's user side (--profile rooms); here palaver.py speaks as an agent: mint an agent token (plv_...)")
    instance = environ.get("PALAVER_INSTANCE", "").strip() or environ.get("CROWDEDSEA_INSTANCE", "").strip()
    client = Client(endpoint, token, instance)
    return COMMANDS[argv[0]](client, argv[1:])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:], os.environ))
    except Failure as e:
        sys.stderr.write("palaver.py: %s\n" % e)
        sys.exit(e.status)
    except KeyboardInterrupt:
        sys.exit(130)
