package notify

import "testing"

func TestPublishWakesSubscribersOfTheRecipient(t *testing.T) {
	l := NewLocal()
	a1, cancelA1 := l.Subscribe("a")
	a2, cancelA2 := l.Subscribe("a")
	b, cancelB := l.Subscribe("b")
	defer cancelB()
	if n := l.Waiters(); n != 3 {
		t.Fatalf("Waiters = %d, want 3", n)
	}
	// Two publishes before anyone reads leave one pending signal each.
	l.Publish([]string{"a"})
	l.Publish([]string{"a", "nobody"})
	for name, ch := range map[string]<-chan struct{}{"a1": a1, "a2": a2} {
		select {
		case <-ch:
		default:
			t.Errorf("%s was not woken", name)
		}
		select {
		case <-ch:
			t.Errorf("%s holds more than one pending signal", name)
		default:
		}
	}
	select {
	case <-b:
		t.Error("b was woken by a publish for a")
	default:
	}
	cancelA1()
	cancelA2()
	if n := l.Waiters(); n != 1 {
		t.Fatalf("Waiters after cancel = %d, want 1", n)
	}
	l.Publish([]string{"a"}) // no subscribers left: nothing blocks
}

// TestPublishWakesSubscribersOfAnyRecipient: a subscriber of "" (hub's
// AnyRecipient) is woken by every publish, whoever it names.
func TestPublishWakesSubscribersOfAnyRecipient(t *testing.T) {
	l := NewLocal()
	every, cancel := l.Subscribe("")
	defer cancel()
	if n := l.Waiters(); n != 0 {
		t.Errorf("a subscriber of every commit counts as %d parked waits, want 0", n)
	}
	for _, ids := range [][]string{{"a"}, {"b", "c"}} {
		l.Publish(ids)
		select {
		case <-every:
		default:
			t.Errorf("a publish for %v did not wake the subscriber of every commit", ids)
		}
	}
}
