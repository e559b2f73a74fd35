/**
 * The value a JSON schema written in code describes, as a type: a tool's parameters (or a prompt's
 * schema) declared as a literal give its handler typed arguments, as openai-node's `zodFunction`
 * does with zod. A schema whose shape is not known where it is written (a `Record`) gives `unknown`s.
 */

type Schema = { readonly [key: string]: unknown };

type Simple = { string: string; number: number; integer: number; boolean: boolean; null: null };

type None = Record<never, never>;
type Props<S> = S extends { readonly properties: infer P } ? (P extends Schema ? P : None) : None;
type RequiredKeys<S> = S extends { readonly required: readonly (infer R)[] } ? (R extends string ? R : never) : never;
type Extra<S> = S extends { readonly additionalProperties: false } ? unknown : { [key: string]: unknown };
type Flat<T> = { [K in keyof T]: T[K] };

type ObjectOf<S, D extends unknown[]> = Flat<
  { -readonly [K in keyof Props<S> as K extends RequiredKeys<S> ? K : never]: SchemaValue<Props<S>[K], D> } & {
    -readonly [K in keyof Props<S> as K extends RequiredKeys<S> ? never : K]?: SchemaValue<Props<S>[K], D>;
  }
> &
  Extra<S>;

type ArrayOf<S, D extends unknown[]> = S extends { readonly items: infer I } ? SchemaValue<I, D>[] : unknown[];

type OfType<T, S, D extends unknown[]> = T extends keyof Simple ? Simple[T] : T extends 'array' ? ArrayOf<S, D> : T extends 'object' ? ObjectOf<S, D> : unknown;

/** The value schema `S` describes (`D` bounds the depth followed, so that a recursive type cannot run away). */
export type SchemaValue<S, D extends unknown[] = []> = D['length'] extends 8
  ? unknown
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly enum: readonly (infer E)[] }
      ? E
      : S extends { readonly anyOf: readonly (infer A)[] }
        ? SchemaValue<A, [...D, 0]>
        : S extends { readonly oneOf: readonly (infer A)[] }
          ? SchemaValue<A, [...D, 0]>
          : S extends { readonly type: infer T }
            ? T extends readonly (infer Each)[]
              ? OfType<Each, S, [...D, 0]>
              : OfType<T, S, [...D, 0]>
            : S extends { readonly properties: Schema }
              ? ObjectOf<S, [...D, 0]>
              : unknown;

/** A tool's arguments as its parameters describe them: always an object (what the model sent that is none is passed as `{}`). */
export type ToolArguments<S> = SchemaValue<S> extends infer V ? (V extends Record<string, unknown> ? V : Record<string, unknown>) : never;
