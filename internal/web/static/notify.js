// "Notify me on this device": registers the service worker, subscribes
// this browser with the server's VAPID key and gives the subscription to
// the server. Without JavaScript the section says push needs it.
(function () {
  var box = document.getElementById("notify-device");
  if (!box) return;
  var button = box.querySelector("button"), status = document.querySelector("#notify [data-status]");
  var say = function (s) { if (status) status.textContent = s; };
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    say("This browser cannot take push notifications; add an ntfy topic instead.");
    return;
  }
  box.hidden = false;
  var key = box.getAttribute("data-key");
  var bytes = function (b64) {
    var s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "==".slice(0, (4 - b64.length % 4) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  };
  button.addEventListener("click", function () {
    say("Asking this browser…");
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(function (reg) {
      return navigator.serviceWorker.ready.then(function () {
        return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(key) });
      });
    }).then(function (sub) {
      var body = sub.toJSON();
      body.label = navigator.userAgent.slice(0, 100);
      return fetch("/settings/notifications/push", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Palaver-Push": "1" },
        body: JSON.stringify(body)
      });
    }).then(function (resp) {
      if (!resp.ok) throw new Error("the server answered " + resp.status);
      say("This device is notified.");
      location.reload();
    }).catch(function (err) { say("Could not subscribe: " + err.message); });
  });
})();
