// Palaver's service worker: only what Web Push needs. It shows each
// notification the server pushes (a title, a summary, a link — never a
// message's body) and opens its link when it is clicked.
self.addEventListener("push", function (e) {
  var n = {};
  try { n = e.data ? e.data.json() : {}; } catch (err) { n = { title: "Palaver" }; }
  var opts = { body: n.summary || "", tag: n.id || undefined, data: { link: n.link || "/" }, icon: "/static/icon.svg" };
  if (n.action) opts.actions = [{ action: "open", title: n.action.label }];
  e.waitUntil(self.registration.showNotification(n.title || "Palaver", opts));
});
self.addEventListener("notificationclick", function (e) {
  e.notification.close();
  var link = (e.notification.data && e.notification.data.link) || "/";
  e.waitUntil(self.clients.openWindow(link));
});
