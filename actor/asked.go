package actor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// asked holds the requests the server sent the client (elicitation/create), each waiting for its
// response. The reader delivers a response to its waiter; a waiter whose context ends withdraws.
type asked struct {
	mu      sync.Mutex
	next    int64
	waiting map[string]chan askedReply // by the request's id, as sent
}

// askedReply is the client's response to a request the server sent: its result or its error.
type askedReply struct {
	result json.RawMessage
	err    *Error
}

// request sends the client the request method with params and waits for its response, or for ctx
// to end. A response that is an error is answered as that *Error.
func (cn *conn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding %s: %v", ErrInternal, method, err)
	}
	a := &cn.asked
	a.mu.Lock()
	a.next++
	id := strconv.Quote("vx-" + strconv.FormatInt(a.next, 10))
	if a.waiting == nil {
		a.waiting = map[string]chan askedReply{}
	}
	ch := make(chan askedReply, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, id)
		a.mu.Unlock()
	}()

	line := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	line = append(line, `,"method":`...)
	line = strconv.AppendQuote(line, method)
	line = append(line, `,"params":`...)
	line = append(append(line, data...), '}')
	cn.send(outItem{data: line})
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// deliver hands a response (a message with result or error and no method) to the request it
// answers; it reports false for a response to nothing the server asked.
func (a *asked) deliver(raw json.RawMessage) bool {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &w) != nil || firstByte(w.ID) != '"' {
		return false
	}
	var id string
	if json.Unmarshal(w.ID, &id) != nil {
		return false
	}
	a.mu.Lock()
	ch, ok := a.waiting[strconv.Quote(id)]
	delete(a.waiting, strconv.Quote(id))
	a.mu.Unlock()
	if !ok {
		return false
	}
	r := askedReply{result: w.Result}
	if w.Error != nil {
		r.err = &Error{Code: w.Error.Code, Message: w.Error.Message, Data: w.Error.Data}
	}
	ch <- r // buffered: the waiter may have gone
	return true
}
