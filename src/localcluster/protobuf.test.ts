import { describe, expect, it } from 'vitest';
import { decodeProtobufObject } from './protobuf.js';
import { ApiError } from './status.js';

// Request bodies kubectl 1.33 sent (kubectl -v=8 prints them), for the commands named.
const SENT: Record<string, string> = {
  'secret': '6b3873000a0c0a027631120653656372657412500a150a056361702d7312001a0022002a0032003800420012090a05656d707479120012120a0870617373776f726412067333637265741a186b756265726e657465732e696f2f62617369632d617574681a002200',
  'namespace': '6b3873000a0f0a02763112094e616d657370616365121e0a160a066361702d6e7312001a0022002a0032003800420012001a020a001a002200',
  'configmap': '6b3873000a0f0a0276311209436f6e6669674d6170121f0a150a056361702d6312001a0022002a0032003800420012060a01611201621a002200',
  'serviceaccount': '6b3873000a140a027631120e536572766963654163636f756e7412180a160a066361702d736112001a0022002a003200380042001a002200',
  'can-i': '6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365737352657669657712460a100a0012001a0022002a0032003800420012280a260a056f74686572120664656c6574651a0022002a077365637265747332067374617475733a001a08080012001a0020001a002200',
  'can-i-list': '6b3873000a310a17617574686f72697a6174696f6e2e6b38732e696f2f7631121653656c665375626a65637452756c657352657669657712230a100a0012001a0022002a0032003800420012090a0764656661756c741a04180022001a002200',
  'token': '6b3873000a280a1861757468656e7469636174696f6e2e6b38732e696f2f7631120c546f6b656e5265717565737412290a100a0012001a0022002a00320038004200120f0a04617564310a046175643220d8041a040a0012001a002200',
  'rolebinding': '6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e67129a010a160a066361702d726212001a0022002a00320038004200122a0a04557365721219726261632e617574686f72697a6174696f6e2e6b38732e696f1a05616c696365220012240a0e536572766963654163636f756e7412001a0764656661756c74220764656661756c741a2e0a19726261632e617574686f72697a6174696f6e2e6b38732e696f120b436c7573746572526f6c651a04766965771a00',
  'clusterrole': '6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512390a160a066361702d637212001a0022002a00320038004200121f0a036765740a046c69737412001a04706f64731a07736563726574732201611a002200',
  'quota': '6b3873000a130a027631120d5265736f7572636551756f7461124c0a150a056361702d7112001a0022002a0032003800420012310a0b0a04706f647312030a01320a160a0c72657175657374732e63707512060a043530306d120a426573744566666f72741a001a002200',
  'priorityclass': '6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c617373122f0a160a066361702d706312001a0022002a0032003800420010e80718002209666f722074657374732a054e657665721a002200',
};
/** A Deployment (kubectl create deployment; its logged body is cut short): the envelope, an empty object. */
const typeMeta = Buffer.concat([Buffer.from([0x0a, 7]), Buffer.from('apps/v1'), Buffer.from([0x12, 10]), Buffer.from('Deployment')]);
const DEPLOYMENT = Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, 0])]);

const decode = (name: string) => decodeProtobufObject(Buffer.from(SENT[name]!, 'hex'));
const refusal = (body: Buffer) => {
  try {
    decodeProtobufObject(body);
  } catch (e) {
    if (e instanceof ApiError) return { code: e.code, reason: e.reason, message: e.message };
    throw e;
  }
  throw new Error('decoded');
};

describe('protobuf request bodies (kubectl 1.32 and later)', () => {
  it.each([
    ['secret', 'create secret generic cap-s --from-literal=password=s3cret --from-literal=empty= --type=kubernetes.io/basic-auth',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cap-s' }, data: { empty: '', password: Buffer.from('s3cret').toString('base64') }, type: 'kubernetes.io/basic-auth' }],
    ['namespace', 'create namespace cap-ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cap-ns' }, spec: {}, status: {} }],
    ['configmap', 'create configmap cap-c --from-literal=a=b', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cap-c' }, data: { a: 'b' } }],
    ['serviceaccount', 'create serviceaccount cap-sa', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cap-sa' } }],
    ['can-i', 'auth can-i delete secrets --namespace other --subresource=status', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, status: {},
      spec: { resourceAttributes: { namespace: 'other', verb: 'delete', resource: 'secrets', subresource: 'status' } },
    }],
    ['can-i-list', 'auth can-i --list', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'default' }, status: {} }],
    ['token', 'create token default --duration=10m --audience=aud1 --audience=aud2',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { audiences: ['aud1', 'aud2'], expirationSeconds: 600 }, status: {} }],
    ['rolebinding', 'create rolebinding cap-rb --clusterrole=view --user=alice --serviceaccount=default:default', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'cap-rb' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }, { kind: 'ServiceAccount', name: 'default', namespace: 'default' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    }],
    ['clusterrole', 'create clusterrole cap-cr --verb=get,list --resource=pods,secrets --resource-name=a', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cap-cr' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'secrets'], resourceNames: ['a'] }],
    }],
    ['quota', 'create quota cap-q --hard=pods=2,requests.cpu=500m --scopes=BestEffort',
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'cap-q' }, spec: { hard: { pods: '2', 'requests.cpu': '500m' }, scopes: ['BestEffort'] }, status: {} }],
    ['priorityclass', 'create priorityclass cap-pc --value=1000 --description="for tests" --preemption-policy=Never',
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'cap-pc' }, value: 1000, globalDefault: false, description: 'for tests', preemptionPolicy: 'Never' }],
  ])('%s: kubectl %s reads as the JSON it stands for', (name, _command, json) => {
    expect(decode(name)).toEqual(json);
  });

  it('a kind it has no table for is 415 naming the kind and what to send instead', () => {
    expect(refusal(DEPLOYMENT)).toEqual({
      code: 415, reason: 'UnsupportedMediaType',
      message: expect.stringMatching(/^a Deployment of apps\/v1 was sent in protobuf: the svc local cluster reads protobuf bodies of Namespace, Secret, .* only; send it as JSON or YAML \(kubectl apply -f, kubectl create -f\)$/),
    });
  });

  it('a field it does not know is 415, not dropped', () => {
    // the ConfigMap with field 9 (a string) appended to its object bytes
    const body = Buffer.from(SENT.configmap!, 'hex');
    const rawLength = body[body.indexOf(0x12, 4 + 2 + body[5]!) + 1]!;
    const extra = Buffer.from([0x4a, 0x01, 0x78]);
    const at = 4 + 2 + body[5]!; // after the TypeMeta field: the raw field's tag
    const patched = Buffer.concat([body.subarray(0, at), Buffer.from([0x12, rawLength + extra.length]), body.subarray(at + 2, at + 2 + rawLength), extra, body.subarray(at + 2 + rawLength)]);
    expect(refusal(patched)).toMatchObject({ code: 415, message: expect.stringMatching(/^field 9 of ConfigMap \(ConfigMap\) is not one it knows/) });
  });

  it('a map key __proto__ is a key like any other', () => {
    // the ConfigMap of `SENT.configmap` with data {__proto__: x}: entry = key "__proto__", value "x"
    const key = Buffer.from('__proto__');
    const entry = Buffer.concat([Buffer.from([0x0a, key.length]), key, Buffer.from([0x12, 1, 0x78])]);
    const object = Buffer.concat([Buffer.from([0x12, entry.length]), entry]);
    const typeMeta = Buffer.concat([Buffer.from([0x0a, 2]), Buffer.from('v1'), Buffer.from([0x12, 9]), Buffer.from('ConfigMap')]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, object.length]), object]);
    const decoded = decodeProtobufObject(body) as { data: Record<string, string> };
    expect(Object.keys(decoded.data)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(decoded.data)).toBe(Object.prototype);
    expect(JSON.stringify(decoded)).toBe('{"apiVersion":"v1","kind":"ConfigMap","data":{"__proto__":"x"}}');
  });

  it('corrupted bodies are 400 or 415 (or decode), never another error', () => {
    let seed = 42; // a fixed sequence: the same bodies every run
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    const bodies = Object.values(SENT).map((hex) => Buffer.from(hex, 'hex'));
    const outcomes = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const body = Buffer.from(bodies[random(bodies.length)]!);
      for (let flips = 1 + random(3); flips > 0; flips--) body[4 + random(body.length - 4)] = random(256);
      try {
        decodeProtobufObject(body.subarray(0, body.length - random(3)));
        outcomes.add('decoded');
      } catch (e) {
        expect(e).toBeInstanceOf(ApiError);
        outcomes.add(String((e as ApiError).code));
      }
    }
    expect([...outcomes].sort()).toEqual(['400', '415', 'decoded']);
  });

  it('bytes that are not a Kubernetes protobuf body are 400', () => {
    expect(refusal(Buffer.from('{"kind":"Secret"}'))).toMatchObject({ code: 400, message: expect.stringContaining('starts with the bytes') });
    expect(refusal(Buffer.from(SENT.secret!, 'hex').subarray(0, 40))).toMatchObject({ code: 400, message: expect.stringContaining('truncated') });
  });
});
