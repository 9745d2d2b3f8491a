// The GitOps controllers the console knows (a leaf of the domain: the app model and the field-manager rules
// both name them, so neither imports the other for it).
export const CONTROLLERS = ['flux', 'argocd'] as const;
export type Controller = (typeof CONTROLLERS)[number];
