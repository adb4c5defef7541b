// Command avatars-create is the Lambda for POST /v1/avatars: a character sheet's files go to the avatar assets bucket (its role may only s3:PutObject there): the same handler as the local stack,
// behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/avawire"

func main() { avawire.Start("avatars-create") }
