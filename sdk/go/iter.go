package bridgeline

import (
	"context"
	"errors"
)

// Iter walks every item of a list, page after page, fetching the next page only when
// the walk reaches it. Client.Assistants, Client.Calls and the other plural methods
// return one:
//
//	it := c.Assistants(ctx, &bridgeline.ListAssistantsParams{Limit: bridgeline.Ptr(50)})
//	for it.Next() {
//		a := it.Current()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// On Go 1.23 and later, All is the same walk as a range-over-func iterator. An Iter
// pages forward (newest first, after params.StartingAfter when set); params.EndingBefore
// must be empty.
type Iter[T any] struct {
	ctx   context.Context
	page  func(ctx context.Context, startingAfter *string) (items []T, hasMore bool, err error)
	id    func(T) string
	items []T
	next  int
	after *string
	more  bool
	cur   T
	err   error
}

func newIter[T any](ctx context.Context, startingAfter, endingBefore *string, page func(ctx context.Context, startingAfter *string) ([]T, bool, error), id func(T) string) *Iter[T] {
	it := &Iter[T]{ctx: ctx, page: page, id: id, after: startingAfter, more: true}
	if endingBefore != nil {
		it.err, it.more = errors.New("bridgeline: an Iter pages forward: leave EndingBefore empty (ListX with EndingBefore pages back)"), false
	}
	return it
}

// Next moves to the next item, fetching a page when needed. It is false at the end of
// the list or on an error (see Err).
func (it *Iter[T]) Next() bool {
	for it.next >= len(it.items) {
		if !it.more || it.err != nil {
			return false
		}
		items, more, err := it.page(it.ctx, it.after)
		if err != nil {
			it.err = err
			return false
		}
		it.items, it.next, it.more = items, 0, more && len(items) > 0
		if len(items) > 0 {
			last := it.id(items[len(items)-1])
			it.after = &last
		}
	}
	it.cur = it.items[it.next]
	it.next++
	return true
}

// Current is the item Next moved to.
func (it *Iter[T]) Current() T { return it.cur }

// Err is the error that stopped the walk, nil at the end of the list.
func (it *Iter[T]) Err() error { return it.err }

// Assistants walks every assistant of the account, newest first (see Iter).
func (c *Client) Assistants(ctx context.Context, params *ListAssistantsParams) *Iter[Assistant] {
	var p ListAssistantsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]Assistant, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListAssistants(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(a Assistant) string { return a.Id })
}

// AssistantVersions walks every version of an assistant, newest first (see Iter).
func (c *Client) AssistantVersions(ctx context.Context, id string, params *ListAssistantVersionsParams) *Iter[AssistantVersion] {
	var p ListAssistantVersionsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]AssistantVersion, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListAssistantVersions(ctx, id, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(v AssistantVersion) string { return v.Id })
}

// Lines walks every line of the account (see Iter).
func (c *Client) Lines(ctx context.Context, params *ListLinesParams) *Iter[Line] {
	var p ListLinesParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]Line, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListLines(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(l Line) string { return l.Id })
}

// Sessions walks every session of the account that params select, newest first (see
// Iter).
func (c *Client) Sessions(ctx context.Context, params *ListSessionsParams) *Iter[Session] {
	var p ListSessionsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]Session, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListSessions(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(s Session) string { return s.Id })
}

// Calls walks every call record that params select, newest first (see Iter).
func (c *Client) Calls(ctx context.Context, params *ListCallsParams) *Iter[Call] {
	var p ListCallsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]Call, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListCalls(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(call Call) string { return call.Id })
}

// Events walks every event that params select, newest first, each parsed as
// webhook.Parse parses a delivery (see WebhookEvent and Iter).
func (c *Client) Events(ctx context.Context, params *ListEventsParams) *Iter[WebhookEvent] {
	var p ListEventsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]WebhookEvent, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListEvents(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		evs := make([]WebhookEvent, len(l.Data))
		for i, e := range l.Data {
			if evs[i], err = e.Parse(); err != nil {
				return nil, false, err
			}
		}
		return evs, l.HasMore, nil
	}, func(e WebhookEvent) string { return e.EventID() })
}

// WebhookEndpoints walks every webhook endpoint of the account, newest first (see Iter).
func (c *Client) WebhookEndpoints(ctx context.Context, params *ListWebhookEndpointsParams) *Iter[WebhookEndpoint] {
	var p ListWebhookEndpointsParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]WebhookEndpoint, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListWebhookEndpoints(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(e WebhookEndpoint) string { return e.Id })
}

// ApiKeys walks every API key of the account, newest first (see Iter).
func (c *Client) ApiKeys(ctx context.Context, params *ListApiKeysParams) *Iter[ApiKey] {
	var p ListApiKeysParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]ApiKey, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListApiKeys(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(k ApiKey) string { return k.Id })
}

// SipTrunks walks every SIP trunk of the account (see Iter).
func (c *Client) SipTrunks(ctx context.Context, params *ListSipTrunksParams) *Iter[SipTrunk] {
	var p ListSipTrunksParams
	if params != nil {
		p = *params
	}
	return newIter(ctx, p.StartingAfter, p.EndingBefore, func(ctx context.Context, after *string) ([]SipTrunk, bool, error) {
		q := p
		q.StartingAfter = after
		l, err := c.ListSipTrunks(ctx, &q)
		if err != nil {
			return nil, false, err
		}
		return l.Data, l.HasMore, nil
	}, func(t SipTrunk) string { return t.Id })
}
