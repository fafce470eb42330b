package mock

import (
	"io"

	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// Auditing reports whether the client audit is on (Config.Audit): every /api/v1 call and file link
// is checked against the client's duties, readable at GET /_control/v1/audit.
func (s *Server) Auditing() bool { return s.svc.Audit != nil }

// WriteAuditSummary writes the audit's summary (the findings by duty, with the keys that broke
// them) to w; it writes nothing when the audit is off.
func (s *Server) WriteAuditSummary(w io.Writer) error {
	if s.svc.Audit == nil {
		return nil
	}
	return s.svc.Audit.WriteSummary(w)
}

// AuditBrokeMust reports whether the audit recorded a breach of a MUST duty (false when the audit
// is off).
func (s *Server) AuditBrokeMust() bool { return s.svc.Audit != nil && s.svc.Audit.HasMust() }

// The audit's bounds (docs/audit.md): it judges each key's last AuditWindow calls, follows at most
// AuditMaxKeys keys, and keeps at most AuditMaxFindings distinct findings (more are counted).
const (
	AuditWindow      = audit.WindowSize
	AuditMaxKeys     = audit.MaxKeys
	AuditMaxFindings = audit.MaxFindings
)
