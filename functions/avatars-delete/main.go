// Command avatars-delete is the Lambda for DELETE /v1/avatars/{id}: removing the avatar's files (its role may only s3:DeleteObject there): the same handler as the local stack,
// behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/avawire"

func main() { avawire.Start("avatars-delete") }
