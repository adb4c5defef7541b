package httpapi

// The AWS shape of API-key auth. API Gateway calls the authorizer Lambda (Authorizer) with
// the request's Authorization header and caches its answer per header value; each /v1
// function then reads the answer from the request context (LambdaAuth) instead of looking
// the key up itself.
//
// An HTTP API cannot shape a denying authorizer's response: it is a bare
// 403 {"message":"Forbidden"}. So the authorizer lets every request with an
// Authorization header through, with either the account or the error code in its
// context, and LambdaAuth answers a bad key with the documented 401 error body. A request
// with no Authorization header at all never reaches the authorizer (the header is its
// identity source, the cache key): API Gateway answers it 401 {"message":"Unauthorized"}.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Keys of the authorizer's context, as the functions see them in
// requestContext.authorizer.lambda.
const (
	AuthorizerAccountID   = "account_id"
	AuthorizerAccountName = "account_name"
	AuthorizerBrandColor  = "account_brand_color"
	AuthorizerErrorCode   = "auth_error"
)

// Authorize finds the account an Authorization header's API key belongs to. A missing,
// malformed or unknown key is an *apierr.Error (401); anything else is an internal error.
func Authorize(ctx context.Context, accounts account.Store, authorization string) (account.Account, error) {
	r := &http.Request{Header: http.Header{"Authorization": {authorization}}}
	text, ok := bearer(r)
	if !ok {
		return account.Account{}, apierr.New(apierr.CodeAPIKeyMissing, "no API key: send it as `Authorization: Bearer sk_...`")
	}
	if !account.WellFormed(text) {
		return account.Account{}, apierr.New(apierr.CodeAPIKeyInvalid, "invalid API key")
	}
	acct, err := accounts.AccountByKeyHash(ctx, account.HashKey(text))
	if errors.Is(err, apierr.ErrNotFound) {
		return account.Account{}, apierr.New(apierr.CodeAPIKeyInvalid, "invalid API key")
	}
	if err != nil {
		return account.Account{}, fmt.Errorf("authenticate: %w", err)
	}
	return acct, nil
}

// AuthorizerHandler is the Lambda authorizer: an HTTP API REQUEST authorizer with payload
// format 2.0 and simple responses. A store failure is returned as an error, which API
// Gateway turns into a 500 without calling the function.
func AuthorizerHandler(accounts account.Store) func(context.Context, events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
	return func(ctx context.Context, req events.APIGatewayV2CustomAuthorizerV2Request) (events.APIGatewayV2CustomAuthorizerSimpleResponse, error) {
		header := req.Headers["authorization"]
		if header == "" && len(req.IdentitySource) > 0 {
			header = req.IdentitySource[0]
		}
		acct, err := Authorize(ctx, accounts, header)
		if e, ok := apierr.As(err); ok {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{
				IsAuthorized: true,
				Context:      map[string]any{AuthorizerErrorCode: e.Code},
			}, nil
		}
		if err != nil {
			return events.APIGatewayV2CustomAuthorizerSimpleResponse{}, err
		}
		return events.APIGatewayV2CustomAuthorizerSimpleResponse{
			IsAuthorized: true,
			Context: map[string]any{
				AuthorizerAccountID:   acct.ID,
				AuthorizerAccountName: acct.Name,
				AuthorizerBrandColor:  acct.BrandColor,
			},
		}, nil
	}
}

// LambdaAuth is the auth middleware of a function behind the authorizer: it takes the
// account from the authorizer's context, and fails closed (401) when there is none.
func (a *API) LambdaAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lambdaCtx map[string]any
		if gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && gw.Authorizer != nil {
			lambdaCtx = gw.Authorizer.Lambda
		}
		if code, _ := lambdaCtx[AuthorizerErrorCode].(string); code != "" {
			msg := "invalid API key"
			if code == apierr.CodeAPIKeyMissing {
				msg = "no API key: send it as `Authorization: Bearer sk_...`"
			} else {
				code = apierr.CodeAPIKeyInvalid
			}
			a.writeError(w, r, apierr.New(code, msg))
			return
		}
		id, _ := lambdaCtx[AuthorizerAccountID].(string)
		if id == "" {
			a.writeError(w, r, apierr.New(apierr.CodeAPIKeyMissing, "no API key: send it as `Authorization: Bearer sk_...`"))
			return
		}
		name, _ := lambdaCtx[AuthorizerAccountName].(string)
		color, _ := lambdaCtx[AuthorizerBrandColor].(string)
		Authenticated(w, r, account.Account{ID: id, Name: name, BrandColor: color}, next)
	})
}
