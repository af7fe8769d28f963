package hub

import "strings"

// The words of the hub's messages (CONVENTIONS.md "The faces own their
// words"). An Error's Msg and a Refusal's Reason write each name that a
// face may spell its own way — an argument, a tool, a thing the seeds call
// otherwise — as a placeholder: {conversation_id}, {check_inbox},
// {conversation}. Each face says them in its words (Words.Say), from a
// table a reader can check against the surface it mirrors; a name a table
// lacks is said as the hub writes it. A value someone gave is quoted by
// echo, which doubles its braces, so it is never taken for a placeholder.
// A person's way to mend an error (Hint) is the face's to say too: the
// hub names the action, never a command.

// Words is a face's names for the hub's placeholders.
type Words map[string]string

// Say is msg in w's words: each {name} (placeholder) as w names it — as it is when w has no word for
// it — and each {{ as {.
func (w Words) Say(msg string) string {
	if !strings.Contains(msg, "{") {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(msg) && msg[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		end := strings.IndexByte(msg[i+1:], '}')
		name := ""
		if end > 0 {
			name = msg[i+1 : i+1+end]
		}
		if !placeholder(name) {
			b.WriteByte(c) // not a placeholder
			continue
		}
		if to, ok := w[name]; ok {
			b.WriteString(to)
		} else {
			b.WriteString(name)
		}
		i += end + 1
	}
	return b.String()
}

// placeholder reports whether name can be one: lower-case letters, digits,
// underscores and spaces, starting with a letter and not ending in a space.
func placeholder(name string) bool {
	return name != "" && 'a' <= name[0] && name[0] <= 'z' && name[len(name)-1] != ' ' &&
		strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_ ") == ""
}

// escapeBraces keeps a value someone gave from being read as a
// placeholder.
func escapeBraces(s string) string { return strings.ReplaceAll(s, "{", "{{") }
