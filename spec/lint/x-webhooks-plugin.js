// Redocly type extension for mediaspec's `x-webhooks`.
//
// Redocly reads a top-level `x-webhooks` in an OpenAPI 3.0 document as the 3.1 `webhooks` map
// (event name -> Path Item). mediaspec's document uses `x-webhooks` as a map from event name to the
// JSON Schema of that event's envelope (the shape the spec's consumers and tests read). This plugin
// tells the linter so: each entry is linted as a Schema (so `struct`, `no-unused-components` and the
// schema rules check it) instead of being misread as a Path Item.
module.exports = function mediaspecXWebhooks() {
  return {
    id: 'mediaspec-x-webhooks',
    typeExtension: {
      oas3(types) {
        return {
          ...types,
          Root: {
            ...types.Root,
            properties: {
              ...types.Root.properties,
              'x-webhooks': 'MediaspecEventSchemaMap',
            },
          },
          MediaspecEventSchemaMap: {
            properties: {},
            additionalProperties: 'Schema',
          },
        };
      },
    },
  };
};
