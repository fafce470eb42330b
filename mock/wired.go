package mock

import "github.com/mediaspec/mediaspec/internal/mock/wired"

// The module's own tests reach a server's services through internal/mock/wired; users of package
// mock see its methods only.
func init() { wired.Register(func(server any) *wired.Services { return &server.(*Server).svc }) }
