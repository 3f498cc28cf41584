// kafkajs against a KairoLog cluster: create a topic with the admin client,
// produce with acks -1 (a plain batch and a gzip-compressed one), consume
// every record with a consumer group, commit, read the commits back and
// list the topics; then set the topic's configs (AlterConfigs) and delete
// partition 0's first two records (DeleteRecords), reading both back. Prints one JSON object on stdout for TestKafkaJS.
//
// Environment: BROKERS (comma-separated host:port), TOPIC, GROUP.
'use strict'

const { Kafka, CompressionTypes, ConfigResourceTypes, Partitioners, logLevel } = require('kafkajs')

const brokers = process.env.BROKERS.split(',')
const topic = process.env.TOPIC
const groupId = process.env.GROUP
const partitions = 3

const kafka = new Kafka({
  clientId: 'kairolog-kafkajs',
  brokers,
  logLevel: logLevel.INFO,
  // Logs go to stderr, which the test shows; stdout is the result alone.
  logCreator: () => ({ namespace, level, log }) => {
    process.stderr.write(JSON.stringify({ level, namespace, ...log }) + '\n')
  },
  retry: { retries: 10 }
})

async function main () {
  const out = { topic, group: groupId }

  const admin = kafka.admin()
  await admin.connect()
  out.created = await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: partitions, replicationFactor: 3 }]
  })
  out.topics = (await admin.listTopics()).sort()

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  const plain = []
  for (let i = 0; i < 6; i++) {
    plain.push({ key: `k${i}`, value: `plain-${i}`, partition: i % partitions })
  }
  out.plain = await producer.send({ topic, acks: -1, messages: plain })
  const gzipped = []
  for (let i = 0; i < 6; i++) {
    gzipped.push({ key: `g${i}`, value: `gzip-${i}`, partition: i % partitions })
  }
  out.gzip = await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: gzipped })
  await producer.disconnect()

  const want = plain.length + gzipped.length
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  out.consumed = []
  await new Promise((resolve, reject) => {
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        out.consumed.push({ partition, offset: message.offset, key: message.key.toString(), value: message.value.toString() })
        await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
        if (out.consumed.length === want) resolve()
      }
    }).catch(reject)
  })
  await consumer.disconnect()

  out.committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions
    .map(p => ({ partition: p.partition, offset: p.offset }))
    .sort((a, b) => a.partition - b.partition)
  out.groups = (await admin.listGroups()).groups.map(g => g.groupId).sort()
  const described = (await admin.describeGroups([groupId])).groups[0]
  out.described = { state: described.state, protocolType: described.protocolType, members: described.members.length }
  out.offsets = (await admin.fetchTopicOffsets(topic))
    .map(p => ({ partition: p.partition, low: p.low, high: p.high }))
    .sort((a, b) => a.partition - b.partition)
  out.cluster = (await admin.describeCluster()).brokers.length

  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }]
  })
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }]
  })
  out.retention = configs.resources[0].configEntries.find(e => e.configName === 'retention.ms').configValue
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '2' }] })
  out.lowAfterDelete = (await admin.fetchTopicOffsets(topic)).find(p => p.partition === 0).low
  await admin.disconnect()

  process.stdout.write(JSON.stringify(out) + '\n')
}

main().catch(err => {
  process.stderr.write(`kafkajs: ${err.stack || err}\n`)
  process.exit(1)
})
