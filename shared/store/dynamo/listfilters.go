package dynamo

import (
	"strings"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// The list filters of GET /v1/calls and GET /v1/sessions each read an index of their
// own; none scans, and none filters more than a bounded number of items in memory.
//
// A call's filters are a scope (the account, a line, an assistant, or a line and an
// assistant) and its state (status and direction). Each scope has an index whose key is
// scope#status#direction, so any combination of status and direction is one partition
// of it, or the merge of a few (status alone: both directions; direction alone: the five
// statuses), each read as a page of at most Limit+1 items. A scope without a state
// filter reads its own index (by_account, by_account_line, by_account_assistant). A
// session has one call or two, so session_id reads by_account_session and checks the
// other filters on those.

// callStateKey is the scope#status#direction key of a call's state indexes.
func callStateKey(scope []string, status, direction string) string {
	return strings.Join(append(scope, status, direction), "#")
}

// addCallFilterKeys sets the index attributes of the filters on a call's item. The
// indexes whose scope the call lacks (no line, no assistant) do not hold it.
func addCallFilterKeys(it item, c call.Call) {
	acct := c.AccountID
	it["account_state"] = str(callStateKey([]string{acct}, c.Status, c.Direction))
	if c.LineID != "" {
		it["account_line_state"] = str(callStateKey([]string{acct, c.LineID}, c.Status, c.Direction))
	}
	if c.AssistantID != "" {
		it["account_assistant"] = str(acct + "#" + c.AssistantID)
		it["account_assistant_state"] = str(callStateKey([]string{acct, c.AssistantID}, c.Status, c.Direction))
	}
	if c.LineID != "" && c.AssistantID != "" {
		it["account_line_assistant_state"] = str(callStateKey([]string{acct, c.LineID, c.AssistantID}, c.Status, c.Direction))
	}
}

// callPlan is how a call list is read: one index, the partitions of it to merge, and
// whether the filters must still be checked on the items read (only for session_id,
// whose partition holds two calls at most).
type callPlan struct {
	index, attr string
	values      []string
	check       bool
}

// planCallList picks the index that serves q's filters exactly.
func planCallList(accountID string, q call.ListQuery) callPlan {
	if q.SessionID != "" {
		return callPlan{index: "by_account_session", attr: "account_session",
			values: []string{accountID + "#" + q.SessionID}, check: true}
	}
	// The scope's index without a state filter ("" when there is none: every call of a
	// line and an assistant is read by state), and its state index.
	var sc struct{ index, attr, stateIndex, stateAttr string }
	key := []string{accountID}
	switch {
	case q.LineID != "" && q.AssistantID != "":
		key = append(key, q.LineID, q.AssistantID)
		sc.stateIndex, sc.stateAttr = "by_account_line_assistant_state", "account_line_assistant_state"
	case q.LineID != "":
		key = append(key, q.LineID)
		sc.index, sc.attr = "by_account_line", "account_line"
		sc.stateIndex, sc.stateAttr = "by_account_line_state", "account_line_state"
	case q.AssistantID != "":
		key = append(key, q.AssistantID)
		sc.index, sc.attr = "by_account_assistant", "account_assistant"
		sc.stateIndex, sc.stateAttr = "by_account_assistant_state", "account_assistant_state"
	default:
		sc.index, sc.attr = "by_account", "account_id"
		sc.stateIndex, sc.stateAttr = "by_account_state", "account_state"
	}
	if q.Status == "" && q.Direction == "" && sc.index != "" {
		return callPlan{index: sc.index, attr: sc.attr, values: []string{strings.Join(key, "#")}}
	}
	statuses, directions := call.Statuses, call.Directions
	if q.Status != "" {
		statuses = []string{q.Status}
	}
	if q.Direction != "" {
		directions = []string{q.Direction}
	}
	p := callPlan{index: sc.stateIndex, attr: sc.stateAttr}
	for _, st := range statuses {
		for _, d := range directions {
			p.values = append(p.values, callStateKey(key, st, d))
		}
	}
	return p
}

// addSessionFilterKeys sets the index attribute of the status filter on a session's item.
func addSessionFilterKeys(it item, s session.Session) {
	it["account_status"] = str(s.AccountID + "#" + s.Status)
}
