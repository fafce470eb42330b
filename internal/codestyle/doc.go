// Package codestyle holds the module's checks over its own source text, beside the import fence
// (internal/fence): every exported name of a package people import has a doc comment, and the
// cleaned packages keep their lines under a ceiling. It has no code of its own.
package codestyle
