"""The built site served quietly from 127.0.0.1: shared by the browser tests and `make audit`."""

from __future__ import annotations

import functools
import http.server
import pathlib
import re
import sys
import threading


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves ``site``, answering unknown paths with the site's own 404 page.

    Material's instant navigation intercepts a click only when the link is listed in
    sitemap.xml, matched with the page's protocol and host but the sitemap's port. The built
    sitemap names the deployed site_url, so the server hands it out with its own origin, as the
    deployed host effectively does; without this every click here would be a full reload.
    """

    site: pathlib.Path
    # Connections are kept open between requests, as a real static host keeps them (GitHub Pages
    # speaks HTTP/2): Lighthouse's simulated slow network charges a new connection for each request
    # of an HTTP/1.0 server, which no reader's browser pays.
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # the stdlib's signature (format shadows a builtin)
        pass

    def do_GET(self):
        if self.path.split("?")[0] != "/sitemap.xml":
            return super().do_GET()
        origin = f"http://{self.server.server_address[0]}:{self.server.server_address[1]}/"
        text = (self.site / "sitemap.xml").read_text()
        body = re.sub(r"<loc>https?://[^/<]+/", f"<loc>{origin}", text).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_error(self, code, message=None, explain=None):
        page = self.site / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A browser closing a kept-alive connection it no longer needs is not an error of the site.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(site: pathlib.Path, handler: type[SiteHandler] = SiteHandler) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Start serving ``site`` on a free port of 127.0.0.1 in a daemon thread; return (server, base URL)."""
    bound = type(handler.__name__, (handler,), {"site": pathlib.Path(site)})
    server = _Server(("127.0.0.1", 0), functools.partial(bound, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
