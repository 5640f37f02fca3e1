/** The HTTP filters a route rule or a backendRef carries, as translation compiled them (Gateway API HTTPRouteFilter). */

export interface HeaderOps {
  readonly set: readonly { readonly name: string; readonly value: string }[];
  readonly add: readonly { readonly name: string; readonly value: string }[];
  readonly remove: readonly string[];
}

export type PathModifier =
  | { readonly kind: 'ReplaceFullPath'; readonly value: string }
  /** Replaces the PathPrefix of the RouteEntry that matched (its `match.path.value`). */
  | { readonly kind: 'ReplacePrefixMatch'; readonly value: string };

export type HttpFilter =
  | ({ readonly kind: 'RequestHeaderModifier' } & HeaderOps)
  | ({ readonly kind: 'ResponseHeaderModifier' } & HeaderOps)
  | {
      readonly kind: 'RequestRedirect';
      readonly scheme?: 'http' | 'https';
      readonly hostname?: string;
      readonly path?: PathModifier;
      readonly port?: number;
      readonly statusCode: 301 | 302 | 303 | 307 | 308;
    }
  | { readonly kind: 'URLRewrite'; readonly hostname?: string; readonly path?: PathModifier }
  | { readonly kind: 'RequestMirror'; readonly backendId: string; readonly percent: number }
  | {
      readonly kind: 'CORS';
      readonly allowOrigins: readonly string[];
      readonly allowCredentials: boolean;
      readonly allowMethods: readonly string[];
      readonly allowHeaders: readonly string[];
      readonly exposeHeaders: readonly string[];
      readonly maxAgeSeconds: number;
    };
