package bench

import (
	"strings"
	"testing"
	"time"
)

func TestSummaryPercentiles(t *testing.T) {
	var l latencies
	for i := 1000; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	s := l.summary()
	if s.Count != 1000 || s.P50 != 500 || s.P90 != 900 || s.P99 != 990 || s.P999 != 999 || s.Max != 1000 {
		t.Fatalf("summary = %+v", s)
	}
	if (latencies{}).summary() != (Summary{}) {
		t.Fatal("an empty summary is not zero")
	}
}

func TestMarkdownGivesRatiosToFloors(t *testing.T) {
	r := &Report{Floors: Floors{FsyncPerSec: 4000, HTTPPerSec: 40000},
		Workloads: []WorkloadStats{{Name: "W1 send, 32 senders", PerSec: 10000}}}
	md := r.Markdown()
	if !strings.Contains(md, "25.0 % of HTTP, 2.5× fsync") || !strings.Contains(md, "fsync 4000/s") {
		t.Fatalf("report:\n%s", md)
	}
}
