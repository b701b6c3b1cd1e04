#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/NAME/) from the
hand-written text graphs in fuzz/corpus/graphdef_text/ and small hand-made
messages, encoding protobuf text with protoc. Run from anywhere; the output
is checked in, so this is needed only to change the seeds. The tf_*.pb
graphs in corpus/graphdef_binary/ are small GraphDefs written by TensorFlow,
and the tf*.index files in corpus/bundle_index/ checkpoint indexes TensorFlow
wrote (from ../shared/saved_models), copied in as they are, as are the
tf_*.pb files of corpus/saved_model/ (saved_model.pb files TensorFlow wrote)
and corpus/session_bundle/'s export.meta of a TF 0.12 session bundle."""
import os
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, '..', 'proto')
CORPUS = os.path.join(HERE, 'corpus')


def encode(message, text, files=('master.proto', 'worker.proto')):
    return subprocess.run(
        ['protoc', '-I', PROTO, '--encode=distflow.' + message] +
        [os.path.join(PROTO, 'distflow', f) for f in files],
        input=text.encode(), stdout=subprocess.PIPE, check=True).stdout


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def record(kind, data):
    return bytes([kind]) + struct.pack('<H', len(data)) + data


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def graphs():
    d = os.path.join(CORPUS, 'graphdef_text')
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name)) as f:
            yield name[:-len('.pbtxt')], f.read()


def main():
    for name, text in graphs():
        write('graphdef_binary', name + '.pb', encode('GraphDef', text))

    tensors = {
        'float_content': 'dtype: DT_FLOAT tensor_shape { dim { size: 2 } } '
                         'tensor_content: "\\000\\000\\200?\\000\\000\\000@"',
        'float_val': 'dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 float_val: 2',
        'int_val': 'dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } int_val: 7',
        'int64': 'dtype: DT_INT64 tensor_shape {} int64_val: -5',
        'string': 'dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "a" string_val: "bc"',
        'bool': 'dtype: DT_BOOL tensor_shape { dim { size: 2 } } bool_val: true',
        'bool_content': 'dtype: DT_BOOL tensor_shape { dim { size: 2 } } tensor_content: "\\001\\000"',
        'bfloat16': 'dtype: DT_BFLOAT16 tensor_shape {} half_val: 16256',
        'uint8': 'dtype: DT_UINT8 tensor_shape { dim { size: 1 } } int_val: 255',
        'double': 'dtype: DT_DOUBLE tensor_shape { dim { size: 1 } } double_val: 2.5',
    }
    for name, text in tensors.items():
        write('tensor_proto', name, encode('TensorProto', text))
        resp = encode('RecvTensorResponse', 'tensor { %s } send_start_micros: 12' % text)
        write('recv_tensor_response', name, b'\x00' + resp)
        write('recv_tensor_response', name + '_sliced', b'\x03' + resp)
    write('recv_tensor_response', 'dead', b'\x00' + encode('RecvTensorResponse', 'is_dead: true'))

    def npy(descr, shape, payload, version=1):
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
        header += ' ' * ((64 - (len(header) + 11) % 64) % 64) + '\n'
        size = struct.pack('<H', len(header)) if version == 1 else struct.pack('<I', len(header))
        return b'\x93NUMPY' + bytes([version, 0]) + size + header.encode() + payload
    write('npy', 'f4', npy('<f4', '(2, 2)', struct.pack('<4f', 1, 2, 3, 4)))
    write('npy', 'i8', npy('<i8', '(3,)', struct.pack('<3q', 1, -2, 3)))
    write('npy', 'b1', npy('|b1', '(2,)', b'\x01\x00'))
    write('npy', 'u1_v2', npy('|u1', '()', b'\x07', version=2))

    # tensor_bundle: a u32 length, a BundleEntryProto, the data file.
    def bundle(entry_text, data):
        entry = encode('BundleEntryProto', entry_text, files=('tensor_bundle.proto',))
        return struct.pack('<I', len(entry)) + entry + data
    write('tensor_bundle', 'float', bundle(
        'dtype: DT_FLOAT shape { dim { size: 2 } } size: 8', struct.pack('<2f', 1, 2)))
    write('tensor_bundle', 'bool', bundle(
        'dtype: DT_BOOL shape { dim { size: 2 } } offset: 1 size: 2', b'\x00\x01\x07'))
    # TensorFlow's string layout: varint lengths, their masked CRC, the bytes.
    lengths_crc = crc32c(struct.pack('<II', 1, 2))
    masked = ((((lengths_crc >> 15) | (lengths_crc << 17)) & 0xFFFFFFFF) + 0xa282ead8) & 0xFFFFFFFF
    strings = b'\x01\x02' + struct.pack('<I', masked) + b'xyz'
    write('tensor_bundle', 'strings', bundle(
        'dtype: DT_STRING shape { dim { size: 2 } } size: %d' % len(strings), strings))

    # bundle_index: distflow's old DFBUNDLE index (its checksum is refilled).
    payload = struct.pack('<2f', 1, 2)
    entry = struct.pack('<I', 1) + b'w' + struct.pack('<II', 1, 1) + struct.pack('<q', 2)
    entry += struct.pack('<QQI', 0, len(payload), crc32c(payload))
    index = b'DFBUNDLE' + struct.pack('<IIQI', 1, 1, len(payload), crc32c(payload)) + entry
    write('bundle_index', 'dfbundle.index', index + struct.pack('<I', crc32c(index)))

    device = '/job:localhost/replica:0/task:0/device:CPU:0'
    worker_graph = ('node { name: "c" op: "Const" device: "%s" '
                    'attr { key: "dtype" value { type: DT_FLOAT } } '
                    'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } } '
                    'node { name: "i" op: "Identity" input: "c" device: "%s" '
                    'attr { key: "T" value { type: DT_FLOAT } } }' % (device, device))
    register = encode('RegisterGraphRequest', 'graph_def { %s }' % worker_graph)
    run = encode('RunGraphRequest', 'step_id: 7')
    recv = encode('RecvTensorRequest', 'step_id: 7 rendezvous_key: "%s;0000000000000001;%s;c:0;0:0"'
                  % (device, device))
    cleanup = encode('CleanupGraphRequest', 'step_id: 7')
    write('worker_request', 'register_run', record(1, register) + record(2, run) + record(4, cleanup))
    write('worker_request', 'recv', record(3, recv))
    write('worker_request', 'session', record(0, encode('CreateWorkerSessionRequest',
                                                        'session_handle: "s"')) +
          record(7, b'') + record(6, encode('DeleteWorkerSessionRequest', 'session_handle: "s"')))

    for name, text in graphs():
        if name in ('array_ops', 'nn_ops', 'linear_model', 'cond', 'state_ops'):
            create = encode('CreateSessionRequest', 'graph_def { %s }' % text)
            write('master_request', name, record(0, create) + record(7, b''))
    linear = dict(graphs())['nn_ops']
    write('master_request', 'run_step',
          record(0, encode('CreateSessionRequest', 'graph_def { %s }' % linear)) +
          record(2, encode('RunStepRequest', 'fetch: "xent:0" fetch: "l2" target: "rnd"')) +
          record(4, encode('MakeCallableRequest', 'options { fetch: "sm" }')) +
          record(5, encode('RunCallableRequest', 'handle: 0')) +
          record(8, b''))


    example = lambda text: encode('Example', text, files=('example.proto', 'feature.proto'))
    sep = b'\xff\xfe'
    full = example('features { feature { key: "x" value { float_list { value: [1, 2] } } } '
                   'feature { key: "name" value { bytes_list { value: "a" } } } '
                   'feature { key: "ids" value { int64_list { value: [1, 2, 3, 4] } } } '
                   'feature { key: "tags" value { bytes_list { value: ["p", "q"] } } } '
                   'feature { key: "counts" value { int64_list { value: [7] } } } '
                   'feature { key: "w" value { float_list { value: [0.5, 0.25, 2] } } } }')
    least = example('features { feature { key: "name" value { bytes_list { value: "b" } } } }')
    write('example_parser', 'batch', b'\x00' + full + sep + least + sep + full)
    write('example_parser', 'scalar', b'\x01' + full)


if __name__ == '__main__':
    main()
