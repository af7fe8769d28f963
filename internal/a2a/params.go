package a2a

import (
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
)

// The members A2A defines for each params object the endpoint reads (the
// SDK's types, and the kind a message's JSON carries), for the one strict
// reading of names (input.Spec, as the MCP and REST faces read theirs): a
// member the method does not take — params.sender, say — is refused by
// name, never dropped (§4 input hygiene).
type (
	sendMembers struct {
		Configuration json.RawMessage `json:"configuration"`
		Message       json.RawMessage `json:"message"`
		Metadata      json.RawMessage `json:"metadata"`
	}
	messageMembers struct {
		Kind             json.RawMessage `json:"kind"`
		MessageID        json.RawMessage `json:"messageId"`
		ContextID        json.RawMessage `json:"contextId"`
		TaskID           json.RawMessage `json:"taskId"`
		ReferenceTaskIDs json.RawMessage `json:"referenceTaskIds"`
		Role             json.RawMessage `json:"role"`
		Parts            json.RawMessage `json:"parts"`
		Metadata         json.RawMessage `json:"metadata"`
		Extensions       json.RawMessage `json:"extensions"`
	}
	configMembers struct {
		AcceptedOutputModes    json.RawMessage `json:"acceptedOutputModes"`
		Blocking               json.RawMessage `json:"blocking"`
		HistoryLength          json.RawMessage `json:"historyLength"`
		PushNotificationConfig json.RawMessage `json:"pushNotificationConfig"`
	}
	taskQueryMembers struct {
		ID            json.RawMessage `json:"id"`
		HistoryLength json.RawMessage `json:"historyLength"`
		Metadata      json.RawMessage `json:"metadata"`
	}
	taskIDMembers struct {
		ID       json.RawMessage `json:"id"`
		Metadata json.RawMessage `json:"metadata"`
	}
)

// checkMembers refuses params of method, one JSON object, that give a
// member the method does not take (in params, or in params.message and
// params.configuration of a send), or give one twice.
func checkMembers(raw json.RawMessage, method string, p any) *rpcError {
	refuse := func(err error) *rpcError {
		return &rpcError{Code: codeInvalidParams, Message: hub.AsError(err).Text(nil, nil)}
	}
	in := &input.Spec{Whole: "params", Part: "params member", Taker: method}
	switch p.(type) {
	case *a2a.MessageSendParams:
		var m sendMembers
		if err := in.Decode(raw, &m); err != nil {
			return refuse(err)
		}
		for _, nested := range []struct {
			raw  json.RawMessage
			name string
			dst  any
		}{{m.Message, "message", &messageMembers{}}, {m.Configuration, "configuration", &configMembers{}}} {
			if len(nested.raw) == 0 || nested.raw[0] != '{' {
				continue // absent, null, or not an object: decoding says so
			}
			in := &input.Spec{Whole: "params." + nested.name, Part: "params." + nested.name + " member", Taker: "a " + nested.name}
			if err := in.Decode(nested.raw, nested.dst); err != nil {
				return refuse(err)
			}
		}
	case *a2a.TaskQueryParams:
		if err := in.Decode(raw, &taskQueryMembers{}); err != nil {
			return refuse(err)
		}
	case *a2a.TaskIDParams:
		if err := in.Decode(raw, &taskIDMembers{}); err != nil {
			return refuse(err)
		}
	default:
		panic(fmt.Sprintf("a2a: no members listed for params of type %T", p))
	}
	return nil
}
