package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/push"
)

// Owner notifications (§19): the person's devices and ntfy topics with
// what notifies them on each, quiet hours in their time zone, and the
// delivery log.

type notifyTargetView struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"` // webpush or ntfy
	URL       string   `json:"url"`
	Label     string   `json:"label"`
	HasToken  bool     `json:"has_token"`
	Kinds     []string `json:"kinds"`
	CreatedAt string   `json:"created_at"`
}

type notifyAttemptView struct {
	At       string `json:"at"`
	TargetID string `json:"target_id"`
	Kind     string `json:"kind"`
	OK       bool   `json:"ok"`
	Status   int    `json:"status"`
	Error    string `json:"error"`
}

type notificationsView struct {
	TimeZone       string              `json:"time_zone"`
	QuietFrom      string              `json:"quiet_from"`
	QuietTo        string              `json:"quiet_to"`
	QuietUrgent    bool                `json:"quiet_urgent"`
	VAPIDPublicKey string              `json:"vapid_public_key"`
	Targets        []notifyTargetView  `json:"targets"`
	Log            []notifyAttemptView `json:"log"`
}

func newNotifyTargetView(t *hub.NotifyTarget) notifyTargetView {
	return notifyTargetView{ID: t.ID, Kind: t.Kind, URL: t.URL, Label: t.Label, HasToken: t.Token != "",
		Kinds: viewsOf(t.Kinds, func(k string) string { return k }), CreatedAt: timeText(t.CreatedAt)}
}

func newNotificationsView(s *push.Settings) notificationsView {
	return notificationsView{TimeZone: s.TimeZone,
		QuietFrom: push.FormatQuiet(s.Prefs.QuietFrom), QuietTo: push.FormatQuiet(s.Prefs.QuietTo), QuietUrgent: s.Prefs.QuietUrgent,
		VAPIDPublicKey: s.VAPIDPublicKey, Targets: viewsOf(s.Targets, newNotifyTargetView),
		Log: viewsOf(s.Log, func(a hub.NotifyAttempt) notifyAttemptView {
			return notifyAttemptView{At: timeText(a.At), TargetID: a.TargetID, Kind: a.Kind, OK: a.OK(), Status: a.Status, Error: a.Error}
		})}
}

func (a *API) notifications(ctx context.Context, r *request) (any, error) {
	s, err := a.notices.Settings(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return newNotificationsView(s), nil
}

// setNotifications sets the person's time zone and quiet hours; kinds,
// when given, are set on every device and topic (what they meant before
// each target had its own).
func (a *API) setNotifications(ctx context.Context, r *request) (any, error) {
	var in struct {
		TimeZone    string   `json:"time_zone"`
		Kinds       []string `json:"kinds"` // nil: each target keeps its own
		QuietFrom   string   `json:"quiet_from"`
		QuietTo     string   `json:"quiet_to"`
		QuietUrgent bool     `json:"quiet_urgent"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	p := hub.NotifyPrefs{QuietUrgent: in.QuietUrgent}
	var err error
	if in.QuietFrom != "" || in.QuietTo != "" {
		if p.QuietFrom, err = push.ParseQuiet(in.QuietFrom); err != nil {
			return nil, err
		}
		if p.QuietTo, err = push.ParseQuiet(in.QuietTo); err != nil {
			return nil, err
		}
	}
	s, err := a.notices.SetSettings(ctx, r.user, in.TimeZone, p, in.Kinds)
	if err != nil {
		return nil, err
	}
	return newNotificationsView(s), nil
}

// addPushSubscription takes a browser's PushSubscription as its toJSON
// gives it, with a label.
func (a *API) addPushSubscription(ctx context.Context, r *request) (any, error) {
	var in struct {
		Endpoint string `json:"endpoint"`
		Keys     struct {
			P256dh string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
		Label string `json:"label"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	t, err := a.notices.AddPushSubscription(ctx, r.user, in.Endpoint, in.Keys.P256dh, in.Keys.Auth, in.Label)
	if err != nil {
		return nil, err
	}
	return newNotifyTargetView(t), nil
}

func (a *API) addNtfyTopic(ctx context.Context, r *request) (any, error) {
	var in struct {
		URL   string `json:"url"`
		Token string `json:"token"`
		Label string `json:"label"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	t, err := a.notices.AddNtfyTopic(ctx, r.user, in.URL, in.Token, in.Label)
	if err != nil {
		return nil, err
	}
	return newNotifyTargetView(t), nil
}

// setNotifyTargetKinds sets the kinds that notify on one device or topic.
func (a *API) setNotifyTargetKinds(ctx context.Context, r *request) (any, error) {
	var in struct {
		Kinds []string `json:"kinds"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	t, err := a.notices.SetTargetKinds(ctx, r.user, r.PathValue("id"), in.Kinds)
	if err != nil {
		return nil, err
	}
	return newNotifyTargetView(t), nil
}

func (a *API) removeNotifyTarget(ctx context.Context, r *request) (any, error) {
	t, err := a.notices.RemoveTarget(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return removedWebhookView{ID: t.ID, Removed: true}, nil
}

// testNotification queues a test to every device and topic of the person.
func (a *API) testNotification(ctx context.Context, r *request) (any, error) {
	n, err := a.notices.Test(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return map[string]any{"queued": n}, nil
}
