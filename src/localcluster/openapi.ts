// /openapi/v2: kubectl (apply, create, explain) and helm (validation) fetch the OpenAPI v2
// document, as protobuf (gnostic openapi_v2.Document) or JSON. We serve an empty one: with no
// definitions, clients skip client-side schema validation and fall back to compiled-in types.
const TITLE = 'svc localcluster';
const VERSION = 'v1.31.0';

function field(num: number, payload: Buffer): Buffer {
  const header: number[] = [(num << 3) | 2];
  let len = payload.length;
  while (len > 0x7f) { header.push((len & 0x7f) | 0x80); len >>>= 7; }
  header.push(len);
  return Buffer.concat([Buffer.from(header), payload]);
}
const text = (num: number, s: string) => field(num, Buffer.from(s, 'utf8'));

/** Document{ swagger=1: "2.0", info=2: Info{ title=1, version=2 }, paths=8: Paths{} } */
export const OPENAPI_V2_PROTOBUF: Buffer = Buffer.concat([
  text(1, '2.0'),
  field(2, Buffer.concat([text(1, TITLE), text(2, VERSION)])),
  field(8, Buffer.alloc(0)),
]);

export const OPENAPI_V2_JSON = { swagger: '2.0', info: { title: TITLE, version: VERSION }, paths: {} };

/** What clients ask for (Accept). */
export const PROTOBUF_OPENAPI_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** What the real server answers with: Go's mime parser rejects the '@' of the Accept form. */
export const PROTOBUF_OPENAPI_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
