package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/push"
)

// Notifications (§19) on the Settings page: this device's Web Push
// subscription, ntfy topics with the kinds that notify on each, quiet
// hours in the person's time zone, and the delivery log. The service worker and the
// web app manifest are served from the root, so the worker's scope is the
// whole dashboard.

// notifySection is what the section shows.
type notifySection struct {
	*push.Settings
	Places []notifyPlace // the devices and topics, each with its checkboxes
	Quiet  [2]string     // HH:MM
	Log    []notifyLine  // the delivery log, each attempt with where it went
}

// notifyLine is one attempt of the delivery log with the label of the
// device or topic it went to ("" once that was removed).
type notifyLine struct {
	hub.NotifyAttempt
	To string
}

// notifyPlace is one device or topic with a checkbox for each kind.
type notifyPlace struct {
	*hub.NotifyTarget
	Kinds []notifyKind
}

// notifyKind is one kind's checkbox.
type notifyKind struct {
	Name, Label string
	On          bool
}

// notifyLabels say each kind in the section's words.
var notifyLabels = map[string]string{
	hub.NotifyQuestion: "Questions from your agents", hub.NotifyHeld: "Held messages", hub.NotifyGrant: "Grant requests",
	hub.NotifyInbound: "Inbound asks", hub.NotifyContact: "Contact requests", hub.NotifyProject: "Project proposals and access",
	hub.NotifyPermission: "Tool permissions", hub.NotifyBrake: "Brakes tripped", hub.NotifyPaused: "Conversations paused",
	hub.NotifyMessage: "Every message to you",
}

// notifySettings is the Settings page's notifications section.
func (w *Web) notifySettings(ctx context.Context, r *request) (*notifySection, error) {
	s, err := w.notices.Settings(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := &notifySection{Settings: s, Quiet: [2]string{push.FormatQuiet(s.Prefs.QuietFrom), push.FormatQuiet(s.Prefs.QuietTo)}}
	for _, t := range s.Targets {
		place := notifyPlace{NotifyTarget: t}
		for _, k := range hub.NotifyKinds {
			place.Kinds = append(place.Kinds, notifyKind{Name: k, Label: notifyLabels[k], On: t.Wants(k)})
		}
		out.Places = append(out.Places, place)
	}
	for _, a := range s.Log {
		line := notifyLine{NotifyAttempt: a}
		for _, t := range s.Targets {
			if t.ID == a.TargetID {
				line.To = t.Label
			}
		}
		out.Log = append(out.Log, line)
	}
	return out, nil
}

func (w *Web) setNotifications(ctx context.Context, r *request) (*reply, error) {
	p := hub.NotifyPrefs{QuietUrgent: form(r, "quiet_urgent") != ""}
	var err error
	if p.QuietFrom, err = push.ParseQuiet(form(r, "quiet_from")); err != nil {
		return nil, err
	}
	if p.QuietTo, err = push.ParseQuiet(form(r, "quiet_to")); err != nil {
		return nil, err
	}
	if _, err := w.notices.SetSettings(ctx, r.user, form(r, "time_zone"), p, nil); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#notify", notice: "Your notifications are saved."}, nil
}

// setNotifyTargetKinds saves the kinds checked for one device or topic.
func (w *Web) setNotifyTargetKinds(ctx context.Context, r *request) (*reply, error) {
	t, err := w.notices.SetTargetKinds(ctx, r.user, r.PathValue("id"), r.PostForm["kind"])
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#notify", notice: "What notifies you on " + t.Label + " is saved."}, nil
}

func (w *Web) addNtfyTopic(ctx context.Context, r *request) (*reply, error) {
	if _, err := w.notices.AddNtfyTopic(ctx, r.user, form(r, "url"), form(r, "token"), form(r, "label")); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#notify", notice: "The ntfy topic is added."}, nil
}

// addPushSubscription takes this browser's PushSubscription.toJSON(),
// posted by notify.js.
func (w *Web) addPushSubscription(ctx context.Context, r *request) (*reply, error) {
	var in struct {
		Endpoint string `json:"endpoint"`
		Keys     struct {
			P256dh string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
		Label string `json:"label"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForm))
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		return nil, hub.Errorf(hub.KindInvalid, "this subscription could not be read; subscribe again from Settings")
	}
	if _, err := w.notices.AddPushSubscription(ctx, r.user, in.Endpoint, in.Keys.P256dh, in.Keys.Auth, in.Label); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#notify", notice: "This device is notified."}, nil
}

// testNotification sends a test to each of the person's devices and
// topics.
func (w *Web) testNotification(ctx context.Context, r *request) (*reply, error) {
	n, err := w.notices.Test(ctx, r.user)
	if err != nil {
		return nil, err
	}
	where := "your device or topic"
	if n > 1 {
		where = fmt.Sprintf("each of your %d devices and topics", n)
	}
	return &reply{redirect: "/settings#notify", notice: "A test notification is on its way to " + where + "; the latest deliveries below say how it went."}, nil
}

func (w *Web) removeNotifyTarget(ctx context.Context, r *request) (*reply, error) {
	t, err := w.notices.RemoveTarget(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#notify", notice: t.Label + " is no longer notified."}, nil
}

// manifest is the web app manifest: the dashboard installs as an app.
const manifest = `{"name":"Palaver","short_name":"Palaver","start_url":"/","scope":"/","display":"standalone",` +
	`"background_color":"#ffffff","theme_color":"#1f6feb","icons":[{"src":"/static/icon.svg","sizes":"any","type":"image/svg+xml"}]}`

// registerNotify mounts the service worker and the manifest at the root.
func (w *Web) registerNotify(mux *http.ServeMux) {
	mux.HandleFunc("GET /sw.js", func(rw http.ResponseWriter, r *http.Request) {
		a := w.static["sw.js"]
		rw.Header().Set("Content-Type", a.contentType)
		rw.Header().Set("Cache-Control", "no-cache")
		rw.Header().Set("Service-Worker-Allowed", "/")
		rw.Write(a.data)
	})
	mux.HandleFunc("GET /manifest.webmanifest", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/manifest+json")
		rw.Write([]byte(manifest))
	})
}
