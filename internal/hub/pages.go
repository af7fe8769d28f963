package hub

import (
	"context"
	"slices"
)

// Pages of a conversation's history (§10.1), one rule for every face: a
// page holds at most its limit of messages and stops earlier when their
// words pass pageBytes, and it says where the pages beside it start, so
// that walking newer (after_seq = NextAfterSeq) or older (before_seq =
// BeforeSeq) from any page hands over every message exactly once, however
// the pages were cut.

// ReadResult is a page of a conversation's history, oldest first, and
// where the pages beside it start.
type ReadResult struct {
	Messages []*Message
	// NextAfterSeq is the page's last seq (the after_seq it was read
	// after, when it is empty): the next, newer page is the one after it.
	NextAfterSeq int64
	HasMore      bool // newer messages follow the page
	// BeforeSeq is the page's first seq (the before_seq it was read
	// before, when it is empty): the page before, older one ends before it.
	BeforeSeq int64
	HasOlder  bool // older messages come before the page
	Reads     []Read
}

// pageBytes caps the words of one page of messages or events, so a result
// stays well under clients' result caps of about 25k tokens (§10.1): a page
// is cut by has_more (or a cursor), never by truncating a body, and always
// holds at least one message.
const pageBytes = 48 << 10

// messageSize is roughly how much of a page a message takes.
func messageSize(m *Message) int {
	return len(m.Body) + len(m.Summary) + len(m.Metadata) + 512
}

// checkPage checks a page's after_seq and limit (§10.3) and returns the
// limit to use.
func checkPage(afterSeq int64, limit int) (int, error) {
	if afterSeq < 0 {
		return 0, invalid("", "after_seq must be 0 or more")
	}
	return MessagesPage.check(limit)
}

// checkPageBefore checks a page's before_seq (0: the latest page) and
// limit, and returns the limit to use.
func checkPageBefore(beforeSeq int64, limit int) (int, error) {
	if beforeSeq < 0 {
		return 0, invalid("", "before_seq must be 1 or more (or 0, or left out, for the latest messages)")
	}
	return MessagesPage.check(limit)
}

// readPage reads the page of a conversation after afterSeq: at most limit
// messages, and fewer when their words pass pageBytes, with has_more saying
// the rest waits (§10.1). It marks nothing read and leaves Reads to the
// caller, who may move a place first.
func readPage(ctx context.Context, r Reader, conversationID string, afterSeq int64, limit int) (*ReadResult, error) {
	msgs, err := r.Messages(ctx, conversationID, afterSeq, limit+1)
	if err != nil {
		return nil, AsError(err)
	}
	res := &ReadResult{NextAfterSeq: afterSeq, BeforeSeq: afterSeq + 1}
	size := 0
	for i, m := range msgs {
		size += messageSize(m)
		if i == limit || (i > 0 && size > pageBytes) {
			res.HasMore = true
			break
		}
		res.Messages = append(res.Messages, m)
		res.NextAfterSeq = m.Seq
	}
	if len(res.Messages) > 0 {
		res.BeforeSeq = res.Messages[0].Seq
	}
	res.HasOlder = res.BeforeSeq > 1 // seqs start at 1
	return res, nil
}

// pageBefore reads the page of conv that ends just before beforeSeq (0:
// the latest page, ending with the last message): its newest limit
// messages, and fewer when their words pass pageBytes, oldest first, with
// HasOlder saying older ones come before it. Like readPage it marks
// nothing read.
func pageBefore(ctx context.Context, r Reader, conv *Conversation, beforeSeq int64, limit int) (*ReadResult, error) {
	if beforeSeq == 0 || beforeSeq > conv.LastSeq+1 {
		beforeSeq = conv.LastSeq + 1
	}
	// Delivered messages have seqs 1…LastSeq with no gaps (§4), so the
	// limit messages before beforeSeq start after beforeSeq-1-limit.
	msgs, err := r.Messages(ctx, conv.ID, max(beforeSeq-1-int64(limit), 0), limit)
	if err != nil {
		return nil, AsError(err)
	}
	msgs = slices.DeleteFunc(msgs, func(m *Message) bool { return m.Seq >= beforeSeq })
	start, size := len(msgs), 0
	for start > 0 {
		size += messageSize(msgs[start-1])
		if start < len(msgs) && size > pageBytes {
			break
		}
		start--
	}
	res := &ReadResult{Messages: msgs[start:], NextAfterSeq: beforeSeq - 1, BeforeSeq: beforeSeq}
	if n := len(res.Messages); n > 0 {
		res.BeforeSeq, res.NextAfterSeq = res.Messages[0].Seq, res.Messages[n-1].Seq
	}
	res.HasOlder = res.BeforeSeq > 1
	res.HasMore = res.NextAfterSeq < conv.LastSeq
	return res, nil
}

// recentPage is the conversation's last limit messages, oldest first, as
// one line each (summaries, no bodies: nothing to cut by size); HasOlder
// says older ones come before them.
func recentPage(ctx context.Context, r Reader, conv *Conversation, limit int) (*ReadResult, error) {
	// Delivered messages have seqs 1…LastSeq with no gaps (§4).
	after := max(conv.LastSeq-int64(limit), 0)
	msgs, err := r.Messages(ctx, conv.ID, after, limit)
	if err != nil {
		return nil, AsError(err)
	}
	return &ReadResult{Messages: msgs, NextAfterSeq: conv.LastSeq, BeforeSeq: after + 1, HasOlder: after > 0}, nil
}
