// The seed repository's building blocks (sandbox/seed.ts and its families, seed-*.ts): the image host the seed
// names, and a Deployment and a Service as the seed writes them.

/** The image host the seed names; the sandbox registry serves it as a mirror (sandbox/registry.ts). */
export const SEED_IMAGE_HOST = 'registry.example.com';

export const deployment = (name: string, image: string, port: number, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: digital-human
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}
    spec:
      containers:
        - name: ${name.split('-')[0]}
          image: ${image}
          ports:
            - containerPort: ${port}
              name: http
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
${extra}`;

export const service = (name: string, port: number) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
spec:
  selector:
    app.kubernetes.io/name: ${name}
  ports:
    - name: http
      port: 80
      protocol: TCP
      targetPort: ${port}
`;
