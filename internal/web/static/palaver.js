// Copy buttons: <button data-copy="ID"> copies the value of the element
// with that id. Without JavaScript the value is selectable as it is.
document.addEventListener("click", function (e) {
  var b = e.target.closest("[data-copy]");
  if (!b) return;
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el) return;
  el.select();
  var done = function () { b.textContent = "Copied"; };
  if (navigator.clipboard) {
    navigator.clipboard.writeText(el.value).then(done, function () { document.execCommand("copy"); done(); });
  } else {
    document.execCommand("copy");
    done();
  }
});

// The Bridge's live rows. A row already on the page is never added twice,
// and the stream's address follows the last event received, so a stream
// opened afresh (after the browser gave up on the old one) resumes where
// the page is instead of where it was drawn.
document.addEventListener("htmx:sseBeforeMessage", function (e) {
  var m = /^\s*<li id="(ev-\d+)"/.exec(e.detail.data || "");
  if (m && document.getElementById(m[1])) e.preventDefault();
});
document.addEventListener("htmx:sseOpen", function (e) {
  var source = e.detail.source, live = e.target;
  var follow = function (ev) {
    var at = live.getAttribute("sse-connect") || "";
    if (!ev.lastEventId || at.indexOf("cursor=") < 0) return;
    live.setAttribute("sse-connect", at.replace(/cursor=[^&]*/, "cursor=" + encodeURIComponent(ev.lastEventId)));
  };
  source.addEventListener("changed", follow);
  source.addEventListener("activity", follow);
});

// Times say "2 min ago" and keep saying it truthfully while a page stays
// open; the exact time is their title.
(function () {
  var span = function (s) {
    if (s < 60) return Math.floor(s) + " s";
    if (s < 3600) return Math.floor(s / 60) + " min";
    if (s < 172800) return Math.floor(s / 3600) + " h";
    return Math.floor(s / 86400) + " days";
  };
  var tick = function () {
    var now = Date.now();
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      var s = (now - at) / 1000;
      t.textContent = s < 0 ? "in " + span(-s) : s < 60 ? "just now" : span(s) + " ago";
    });
  };
  setInterval(tick, 30000);
})();

// A conversation opens at its newest messages and the box to write in: the
// latest page scrolls #write into view once it is shown (a page load, or a
// page the dashboard swapped in), unless the address names another place
// (#seq-N from a search). It runs after htmx's own scrolling, which puts a
// swapped-in page at its top. While the page stays open, new messages
// keep it at the bottom when it was there. Without JavaScript the links
// to a conversation carry #write, and the browser does the same.
(function () {
  var atNewest = function () {
    var write = document.getElementById("write");
    if (!write || !document.querySelector("#messages[data-latest]")) return;
    if (location.hash && location.hash !== "#write") return;
    write.scrollIntoView({ block: "end" });
  };
  var atBottom = false;
  var nearBottom = function () {
    return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  };
  document.addEventListener("DOMContentLoaded", atNewest);
  document.addEventListener("htmx:beforeSwap", function (e) {
    atBottom = e.target !== document.body && e.target.querySelector("#messages") !== null && nearBottom();
  });
  document.addEventListener("htmx:afterSettle", function (e) {
    if (e.target === document.body) {
      setTimeout(atNewest, 0);
    } else if (atBottom && e.target.querySelector("#messages")) {
      atBottom = false;
      setTimeout(atNewest, 0);
    }
  });
})();

// A form that destroys asks first: its data-confirm question in a dialog,
// and only "Yes, go on" sends it, with confirmed=yes so the server does
// not ask again. Without JavaScript the server asks on a page of its own.
(function () {
  var dialog;
  var ask = function (form, submitter) {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.id = "confirm";
      dialog.setAttribute("aria-labelledby", "confirm-heading");
      dialog.innerHTML = '<article><h2 id="confirm-heading">Are you sure?</h2><p id="confirm-question"></p>' +
        '<footer class="actions"><button type="button" class="secondary outline" value="cancel">Cancel</button>' +
        '<button type="button" class="danger" value="yes">Yes, go on</button></footer></article>';
      document.body.appendChild(dialog);
      dialog.addEventListener("click", function (e) {
        var b = e.target.closest("button");
        if (b || e.target === dialog) dialog.close(b ? b.value : "cancel");
      });
    }
    dialog.querySelector("#confirm-question").textContent = form.getAttribute("data-confirm");
    dialog.onclose = function () {
      if (dialog.returnValue !== "yes") return;
      var yes = document.createElement("input");
      yes.type = "hidden";
      yes.name = "confirmed";
      yes.value = "yes";
      form.appendChild(yes);
      form.requestSubmit(submitter || undefined);
    };
    dialog.returnValue = "";
    dialog.showModal();
    dialog.querySelector('button[value="cancel"]').focus();
  };
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute("data-confirm")) return;
    if (form.querySelector('input[name="confirmed"]')) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    ask(form, e.submitter);
  }, true);
})();

// The live stream's state, said on the page. While it reconnects, the
// page says so and for how long; when the sign-in has ended (signed out
// elsewhere, a new password), the page says that instead, hides what it
// showed — no longer kept up to date — and offers to sign in again.
(function () {
  var lost = 0, timer = null, ended = false;
  var bar = function () { return document.getElementById("connection"); };
  var show = function (html) {
    var b = bar();
    if (!b) return;
    b.innerHTML = html;
    b.hidden = false;
  };
  var tick = function () {
    if (ended || !lost) return;
    var s = Math.floor((Date.now() - lost) / 1000);
    show("Reconnecting to the server… (lost " + s + " s ago). What this page shows may be out of date.");
  };
  var probe = function () {
    fetch("/", { redirect: "manual", headers: { "HX-Request": "true" }, cache: "no-store" }).then(function (r) {
      if (r.type !== "opaqueredirect" || ended) return;
      ended = true;
      var b = bar();
      if (b) {
        var next = location.pathname + location.search;
        b.textContent = "Your sign-in has ended: you were signed out elsewhere, or your password changed. ";
        var a = document.createElement("a");
        a.href = "/signin" + (next === "/" ? "" : "?next=" + encodeURIComponent(next));
        a.textContent = "Sign in again";
        a.setAttribute("hx-boost", "false");
        b.appendChild(a);
        b.hidden = false;
        b.classList.add("connection-ended");
      }
      var main = document.getElementById("main");
      if (main) main.hidden = true;
    }, function () { /* the server is away: still reconnecting */ });
  };
  document.addEventListener("htmx:sseError", function () {
    if (!lost) lost = Date.now();
    if (!timer) timer = setInterval(tick, 1000);
    tick();
    probe();
  });
  document.addEventListener("htmx:sseOpen", function () {
    lost = 0;
    if (timer) { clearInterval(timer); timer = null; }
    if (!ended && bar()) bar().hidden = true;
  });
})();
