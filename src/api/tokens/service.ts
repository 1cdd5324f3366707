// Token administration over the token Secrets (the store the API verifies against): mint,
// list, revoke by name. Used by the REST routes and by `svc tokens` (an admin's kubeconfig).
import { ApiError } from '../errors.js';
import { mintToken, tokenInfo, TOKEN_NAME_PATTERN, type StoredSecret, type TokenGrant, type TokenInfo, type TokenSecret } from '../tokens.js';

/** The token Secrets of one namespace. */
export interface TokenStore {
  namespace: string;
  list(): Promise<StoredSecret[]>;
  /** Secrets labelled with this token name (normally zero or one). */
  findByName(name: string): Promise<StoredSecret[]>;
  create(secret: TokenSecret): Promise<StoredSecret>;
  delete(secretName: string): Promise<void>;
}

export interface MintedToken { value: string; info: TokenInfo }

export class TokenService {
  constructor(private readonly store: TokenStore) {}

  /** Mints a named token; 409 when the name is taken. The value is returned once, never stored. */
  async create(grant: TokenGrant & { name: string }): Promise<MintedToken> {
    if ((await this.findByName(grant.name)) !== undefined) {
      throw new ApiError(409, `a token named ${grant.name} already exists: revoke it first or choose another name`);
    }
    const { token, secret } = mintToken(grant, this.store.namespace);
    const info = tokenInfo(await this.store.create(secret));
    if (!info) throw new Error('the stored token Secret does not read back');
    return { value: token, info };
  }

  async list(): Promise<TokenInfo[]> {
    return (await this.store.list()).map(tokenInfo).filter((i): i is TokenInfo => i !== null).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** By given name, or by Secret name for a token without one (svc dev's admin token). */
  async findByName(name: string): Promise<TokenInfo | undefined> {
    // a name no token can have is no label value either: the cluster refused the selector (500)
    const labelled = TOKEN_NAME_PATTERN.test(name) ? (await this.store.findByName(name)).map(tokenInfo).find((i) => i !== null) : undefined;
    return labelled ?? (await this.list()).find((i) => i.secretName === name);
  }

  async revoke(info: TokenInfo): Promise<void> {
    await this.store.delete(info.secretName);
  }
}
