export {
  TestCluster,
  postgresAvailable,
  postgresBinDir,
  startCluster,
  type ClusterOptions,
} from './cluster.js';
