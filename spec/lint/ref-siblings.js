// Local Redocly rule: the `recommended` spec-ref-siblings rule without its one false alarm here.
// OpenAPI 3.0 ignores every sibling of a `$ref`, so the built-in rule reports each one; but the
// x-provenance annotations of ../openapi.yaml (issue 22: where each element comes from) sit next to
// `$ref` on purpose and are read by our own tooling (kin-openapi keeps them in the Ref's
// Extensions), not by generators. This rule reports every other sibling, as the built-in one does.
module.exports = function refSiblingsPlugin() {
  return {
    id: 'mediaspec',
    rules: {
      oas3: {
        'ref-siblings': () => ({
          ref: {
            leave(node, { report, location, type }) {
              if (type.name === 'PathItem') return;
              for (const key of Object.keys(node)) {
                if (key === '$ref' || key === 'x-provenance') continue;
                report({
                  message: `Property \`${key}\` is not expected here because it is defined alongside \`$ref\`.`,
                  location: location.child(key).key(),
                });
              }
            },
          },
        }),
      },
    },
  };
};
